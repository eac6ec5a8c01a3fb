// A chunk of encoded messages, the unit the generation worker hands to the sender: frames of
// [u16 key bytes][u32 value bytes][key][value], back to back, in one transferable buffer. The
// worker pays for turning hit strings into bytes; the sender only copies bytes.

/** One Kafka message: the key picks the partition; the value is one JSON document. */
export interface Message {
  readonly key: string;
  readonly value: string;
}

export interface FrameChunk {
  readonly buffer: Buffer;
  /** Bytes of frames in `buffer`. */
  readonly length: number;
  readonly count: number;
}

const FRAME_HEADER = 6;

/** Fills one chunk with frames; `take` hands it over and starts the next. */
export class FrameWriter {
  private buf: Buffer;
  private end = 0;
  private count = 0;
  private pendingValue = 0;

  constructor(private readonly capacity: number) {
    this.buf = Buffer.allocUnsafeSlow(capacity);
  }

  get size(): number {
    return this.end;
  }

  get messages(): number {
    return this.count;
  }

  append(key: string, value: string): void {
    const worst = FRAME_HEADER + 3 * (key.length + value.length);
    if (this.end + worst > this.buf.length) this.grow(worst);
    const keyBytes = this.buf.write(key, this.end + FRAME_HEADER, "utf8");
    const valueBytes = this.buf.write(value, this.end + FRAME_HEADER + keyBytes, "utf8");
    this.buf.writeUInt16LE(keyBytes, this.end);
    this.buf.writeUInt32LE(valueBytes, this.end + 2);
    this.end += FRAME_HEADER + keyBytes + valueBytes;
    this.count += 1;
  }

  /** The buffer being filled; valid until the next begin, append or take. */
  get buffer(): Buffer {
    return this.buf;
  }

  /**
   * Starts a frame with `key` and room for `maxValue` value bytes, for a caller that writes the
   * value straight into `buffer`; returns where the value starts. Finish it with `commit`.
   */
  begin(key: string, maxValue: number): number {
    const worst = FRAME_HEADER + 3 * key.length + maxValue;
    if (this.end + worst > this.buf.length) this.grow(worst);
    const keyBytes = this.buf.write(key, this.end + FRAME_HEADER, "utf8");
    this.buf.writeUInt16LE(keyBytes, this.end);
    this.pendingValue = this.end + FRAME_HEADER + keyBytes;
    return this.pendingValue;
  }

  /** Ends the frame begun last; `valueEnd` is the offset just after the value. */
  commit(valueEnd: number): void {
    this.buf.writeUInt32LE(valueEnd - this.pendingValue, this.end + 2);
    this.end = valueEnd;
    this.count += 1;
  }

  take(): FrameChunk {
    const chunk = { buffer: this.buf, length: this.end, count: this.count };
    this.buf = Buffer.allocUnsafeSlow(this.capacity);
    this.end = 0;
    this.count = 0;
    return chunk;
  }

  private grow(extra: number): void {
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.end + extra));
    this.buf.copy(bigger, 0, 0, this.end);
    this.buf = bigger;
  }
}

/** Walks a chunk frame by frame; `key` and `value` are views into the chunk, not copies. */
export class FrameCursor {
  key: Buffer = Buffer.alloc(0);
  value: Buffer = Buffer.alloc(0);
  private offset = 0;

  constructor(private readonly chunk: FrameChunk) {}

  next(): boolean {
    if (this.offset >= this.chunk.length) return false;
    const b = this.chunk.buffer;
    const keyStart = this.offset + FRAME_HEADER;
    const valueStart = keyStart + b.readUInt16LE(this.offset);
    const valueEnd = valueStart + b.readUInt32LE(this.offset + 2);
    this.key = b.subarray(keyStart, valueStart);
    this.value = b.subarray(valueStart, valueEnd);
    this.offset = valueEnd;
    return true;
  }
}

/** Calls `visit` with each frame's key and value bytes. */
export function forEachFrame(chunk: FrameChunk, visit: (key: Buffer, value: Buffer) => void): void {
  const cursor = new FrameCursor(chunk);
  while (cursor.next()) visit(cursor.key, cursor.value);
}

/** The chunk as messages, for sinks that want strings and buffers (kafkajs). */
export function chunkMessages(chunk: FrameChunk): { key: string; value: Buffer }[] {
  const messages: { key: string; value: Buffer }[] = [];
  forEachFrame(chunk, (key, value) => messages.push({ key: key.toString("utf8"), value }));
  return messages;
}

/** Frames of plain messages, for code paths that render in the main thread. */
export function framesOf(messages: readonly Message[]): FrameChunk {
  const writer = new FrameWriter(64 * 1024);
  for (const m of messages) writer.append(m.key, m.value);
  return writer.take();
}
