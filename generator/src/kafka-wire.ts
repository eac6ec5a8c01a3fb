// Just enough of the Kafka wire protocol to produce fast: a v2 record batch written straight into
// one buffer per partition, wrapped in a Produce v7 request (acks=1, no compression, no producer
// id), and the v7 response's per-partition error codes. kafkajs builds a buffer per record and
// copies each batch several times; on a 2-core machine that capped it near 50k hits/s.
// Spec: https://kafka.apache.org/protocol (Produce API, RecordBatch).

/** CRC-32C (Castagnoli), slicing-by-8 tables: the record batch checksum. */
const CRC_TABLES: Int32Array[] = (() => {
  const tables = Array.from({ length: 8 }, () => new Int32Array(256));
  const first = tables[0] as Int32Array;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    first[n] = c;
  }
  for (let t = 1; t < 8; t++) {
    const prev = tables[t - 1] as Int32Array;
    const table = tables[t] as Int32Array;
    for (let n = 0; n < 256; n++) table[n] = ((prev[n] as number) >>> 8) ^ (first[(prev[n] as number) & 0xff] as number);
  }
  return tables;
})();

export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = CRC_TABLES as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
  let crc = -1;
  let i = start;
  // Bytes up to a 4-byte boundary one at a time, then whole words through an Int32Array view:
  // one load per four bytes instead of four. Words are read little-endian, as on x86 and ARM.
  while (i < end && ((buf.byteOffset + i) & 3) !== 0) crc = (t0[(crc ^ (buf[i++] as number)) & 0xff] as number) ^ (crc >>> 8);
  const words = i < end ? new Int32Array(buf.buffer, buf.byteOffset + i, (end - i) >>> 2) : new Int32Array(0);
  const pairs = words.length & ~1;
  for (let w = 0; w < pairs; w += 2) {
    const a = crc ^ (words[w] as number);
    const b = words[w + 1] as number;
    crc = (t7[a & 0xff] as number) ^ (t6[(a >>> 8) & 0xff] as number) ^ (t5[(a >>> 16) & 0xff] as number) ^ (t4[a >>> 24] as number) ^
      (t3[b & 0xff] as number) ^ (t2[(b >>> 8) & 0xff] as number) ^ (t1[(b >>> 16) & 0xff] as number) ^ (t0[b >>> 24] as number);
  }
  i += pairs * 4;
  for (; i < end; i++) crc = (t0[(crc ^ (buf[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** Kafka's murmur2, as its Java client and kafkajs's DefaultPartitioner compute it. */
export function murmur2(data: Uint8Array): number {
  const m = 0x5bd1e995;
  const length = data.length;
  let h = 0x9747b28c ^ length;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = (data[i] as number) | ((data[i + 1] as number) << 8) | ((data[i + 2] as number) << 16) | ((data[i + 3] as number) << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  const rest = length & 3;
  if (rest === 3) h ^= (data[whole + 2] as number) << 16;
  if (rest >= 2) h ^= (data[whole + 1] as number) << 8;
  if (rest >= 1) h = Math.imul(h ^ (data[whole] as number), m);
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h;
}

/** The partition Java's (and kafkajs's) default partitioner picks for a keyed message. */
export function partitionForKey(key: string, partitions: number): number {
  return (murmur2(Buffer.from(key)) & 0x7fffffff) % partitions;
}

const PRODUCE_API_KEY = 0;
export const PRODUCE_VERSION = 7;
/** Record batch header bytes: baseOffset … recordCount. */
const BATCH_HEADER = 61;
/** Offset of the attributes field inside the batch: the CRC covers from here to the end. */
const CRC_FROM = 21;

function varintSize(value: number): number {
  let v = (value << 1) ^ (value >> 31); // zigzag
  let size = 1;
  while ((v & ~0x7f) !== 0) {
    v >>>= 7;
    size += 1;
  }
  return size;
}

function writeVarint(buf: Buffer, offset: number, value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  while (v > 0x7f) {
    buf[offset++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[offset++] = v;
  return offset;
}

/**
 * One partition's next Produce request, filled record by record. The request header and batch
 * header are reserved up front and written by `finish`, so records are copied exactly once.
 */
export class ProduceRequestBuilder {
  private buf: Buffer;
  private readonly prefix: number;
  private end: number;
  private count = 0;

  constructor(
    private readonly clientId: string,
    private readonly topic: string,
    readonly partition: number,
    capacity: number,
  ) {
    // size, apiKey, apiVersion, correlationId, clientId, transactionalId, acks, timeout, topics[1], name, partitions[1], index, records size
    this.prefix = 4 + 2 + 2 + 4 + 2 + Buffer.byteLength(clientId) + 2 + 2 + 4 + 4 + 2 + Buffer.byteLength(topic) + 4 + 4 + 4;
    this.buf = Buffer.allocUnsafe(capacity);
    this.end = this.prefix + BATCH_HEADER;
  }

  get records(): number {
    return this.count;
  }

  /** Bytes of records and headers so far. */
  get size(): number {
    return this.end;
  }

  append(key: string, value: string): void {
    // Hits are ASCII, so a string's length is its byte length: write on that guess and check the
    // bytes written; only a non-ASCII message pays for measuring its UTF-8 size first.
    if (!this.tryAppend(key, key.length, value, value.length)) {
      if (!this.tryAppend(key, Buffer.byteLength(key), value, Buffer.byteLength(value))) throw new Error("record encoding mismatch");
    }
  }

  /** Appends a record whose key and value are already bytes: a straight copy. */
  appendBytes(key: Uint8Array, value: Uint8Array): void {
    const body = 1 + 1 + varintSize(this.count) + varintSize(key.length) + key.length + varintSize(value.length) + value.length + 1;
    this.ensure(5 + body);
    let o = writeVarint(this.buf, this.end, body);
    this.buf[o++] = 0; // attributes
    this.buf[o++] = 0; // timestampDelta 0
    o = writeVarint(this.buf, o, this.count); // offsetDelta
    o = writeVarint(this.buf, o, key.length);
    this.buf.set(key, o);
    o = writeVarint(this.buf, o + key.length, value.length);
    this.buf.set(value, o);
    o += value.length;
    this.buf[o++] = 0; // no headers
    this.end = o;
    this.count += 1;
  }

  private tryAppend(key: string, keyBytes: number, value: string, valueBytes: number): boolean {
    const body = 1 + 1 + varintSize(this.count) + varintSize(keyBytes) + keyBytes + varintSize(valueBytes) + valueBytes + 1;
    // Room for the worst case (3 UTF-8 bytes per UTF-16 unit), so a wrong guess cannot overrun.
    this.ensure(5 + body + 2 * (key.length + value.length));
    let o = writeVarint(this.buf, this.end, body);
    this.buf[o++] = 0; // attributes
    this.buf[o++] = 0; // timestampDelta 0
    o = writeVarint(this.buf, o, this.count); // offsetDelta
    o = writeVarint(this.buf, o, keyBytes);
    if (this.buf.write(key, o, "utf8") !== keyBytes) return false;
    o = writeVarint(this.buf, o + keyBytes, valueBytes);
    if (this.buf.write(value, o, "utf8") !== valueBytes) return false;
    o += valueBytes;
    this.buf[o++] = 0; // no headers
    this.end = o;
    this.count += 1;
    return true;
  }

  /** The finished request, ready for the socket; the builder must not be used afterwards. */
  finish(correlationId: number, timeoutMs: number, nowMs: number): Buffer {
    const b = this.buf;
    let o = 0;
    o = b.writeInt32BE(this.end - 4, o);
    o = b.writeInt16BE(PRODUCE_API_KEY, o);
    o = b.writeInt16BE(PRODUCE_VERSION, o);
    o = b.writeInt32BE(correlationId, o);
    o = b.writeInt16BE(Buffer.byteLength(this.clientId), o);
    o += b.write(this.clientId, o, "utf8");
    o = b.writeInt16BE(-1, o); // no transactional id
    o = b.writeInt16BE(1, o); // acks=1
    o = b.writeInt32BE(timeoutMs, o);
    o = b.writeInt32BE(1, o);
    o = b.writeInt16BE(Buffer.byteLength(this.topic), o);
    o += b.write(this.topic, o, "utf8");
    o = b.writeInt32BE(1, o);
    o = b.writeInt32BE(this.partition, o);
    o = b.writeInt32BE(this.end - this.prefix, o);
    const batch = o;
    o = b.writeBigInt64BE(0n, o); // baseOffset
    o = b.writeInt32BE(this.end - batch - 12, o); // batchLength: after baseOffset and itself
    o = b.writeInt32BE(-1, o); // partitionLeaderEpoch
    b[o++] = 2; // magic
    const crcAt = o;
    o += 4;
    o = b.writeInt16BE(0, o); // attributes: no compression, create time
    o = b.writeInt32BE(this.count - 1, o); // lastOffsetDelta
    o = b.writeBigInt64BE(BigInt(nowMs), o); // baseTimestamp
    o = b.writeBigInt64BE(BigInt(nowMs), o); // maxTimestamp
    o = b.writeBigInt64BE(-1n, o); // producerId
    o = b.writeInt16BE(-1, o); // producerEpoch
    o = b.writeInt32BE(-1, o); // baseSequence
    b.writeInt32BE(this.count, o);
    b.writeUInt32BE(crc32c(b, batch + CRC_FROM, this.end), crcAt);
    return b.subarray(0, this.end);
  }

  private ensure(extra: number): void {
    if (this.end + extra <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.end + extra));
    this.buf.copy(bigger, 0, 0, this.end);
    this.buf = bigger;
  }
}

export interface PartitionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly baseOffset: bigint;
}

/** Parses a Produce v7 response frame (without its size prefix). */
export function parseProduceResponse(frame: Buffer): { correlationId: number; partitions: PartitionResult[] } {
  let o = 0;
  const correlationId = frame.readInt32BE(o);
  o += 4;
  const partitions: PartitionResult[] = [];
  const topics = frame.readInt32BE(o);
  o += 4;
  for (let t = 0; t < topics; t++) {
    const nameLength = frame.readInt16BE(o);
    const topic = frame.toString("utf8", o + 2, o + 2 + nameLength);
    o += 2 + nameLength;
    const count = frame.readInt32BE(o);
    o += 4;
    for (let p = 0; p < count; p++) {
      const partition = frame.readInt32BE(o);
      const errorCode = frame.readInt16BE(o + 4);
      const baseOffset = frame.readBigInt64BE(o + 6);
      o += 4 + 2 + 8 + 8 + 8; // index, error, baseOffset, logAppendTime, logStartOffset
      partitions.push({ topic, partition, errorCode, baseOffset });
    }
  }
  return { correlationId, partitions };
}
