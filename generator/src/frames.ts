// A chunk of encoded messages, the unit `batch` hands to a sink: frames of
// [u16 key bytes][u32 value bytes][key][value], back to back, in one buffer. The renderer writes
// each hit straight into the chunk as UTF-8, once; the file sink copies those bytes and the Kafka
// sink hands kafkajs Buffer views of them (no string, no re-encoding on the way out).

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
