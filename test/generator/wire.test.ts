// The hand-written Kafka encoding: CRC-32C and murmur2 against reference implementations, and the
// frame chunks that carry rendered hits from the renderer to the sinks.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { Partitioners } from "kafkajs";
import { FrameWriter, forEachFrame, framesOf } from "../../generator/src/frames.ts";
import { ProduceRequestBuilder, crc32c, parseProduceResponse, partitionForKey } from "../../generator/src/kafka-wire.ts";

function crc32cBytewise(buf: Uint8Array): number {
  let crc = -1;
  for (const byte of buf) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ -1) >>> 0;
}

describe("Kafka wire encoding", () => {
  it("computes CRC-32C: the standard check value and any offset or length", () => {
    assert.equal(crc32c(Buffer.from("123456789")), 0xe3069283);
    const data = randomBytes(4099);
    for (const [start, end] of [[0, 0], [0, 1], [1, 9], [3, 4099], [21, 4000], [2, 3]] as const) {
      assert.equal(crc32c(data, start, end), crc32cBytewise(data.subarray(start, end)), `${start}…${end}`);
    }
  });

  it("picks partitions like kafkajs for keys of every length", () => {
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionMetadata = [0, 1, 2, 3, 4].map((partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 1, replicas: [1], isr: [1] }));
    for (let length = 1; length <= 24; length++) {
      for (let n = 0; n < 50; n++) {
        const key = randomBytes(length).toString("base64url").slice(0, length);
        assert.equal(partitionForKey(key, 5), partitioner({ topic: "t", partitionMetadata, message: { key, value: "" } }), key);
      }
    }
  });

  it("lays out a produce request: size prefix, v7 header, one record batch with a valid CRC", () => {
    const builder = new ProduceRequestBuilder("client", "hits", 1, 1024);
    builder.append("42", '{"a":1}');
    builder.appendBytes(Buffer.from("43"), Buffer.from('{"b":"ü"}'));
    builder.append("44", '{"c":"日本"}'); // non-ASCII goes through the measured path
    const request = builder.finish(7, 30_000, Date.UTC(2026, 5, 1));
    assert.equal(request.readInt32BE(0), request.length - 4);
    assert.equal(request.readInt16BE(4), 0); // Produce
    assert.equal(request.readInt16BE(6), 7);
    assert.equal(request.readInt32BE(8), 7);
    // size 4, key 2, version 2, correlation 4, client id 2+6, transactional id 2, acks 2, timeout 4,
    // topics 4, name 2+4, partitions 4, partition 4, records size 4: the batch starts at byte 50.
    assert.equal(request.readInt32BE(42), 1, "partition");
    assert.equal(request.readInt32BE(46), request.length - 50, "records size");
    const records = request.subarray(50);
    assert.equal(records.readBigInt64BE(0), 0n);
    assert.equal(records.readInt32BE(8), records.length - 12);
    assert.equal(records[16], 2);
    assert.equal(records.readUInt32BE(17), crc32c(records, 21, records.length));
    assert.equal(records.readInt32BE(57), 3, "record count");
  });

  it("reads the per-partition result of a produce response", () => {
    const frame = Buffer.alloc(4 + 4 + 2 + 4 + 4 + 4 + 2 + 8 + 8 + 8 + 4);
    let o = frame.writeInt32BE(9, 0);
    o = frame.writeInt32BE(1, o);
    o = frame.writeInt16BE(4, o);
    o += frame.write("hits", o);
    o = frame.writeInt32BE(1, o);
    o = frame.writeInt32BE(1, o);
    o = frame.writeInt16BE(10, o);
    frame.writeBigInt64BE(123n, o);
    assert.deepEqual(parseProduceResponse(frame), { correlationId: 9, partitions: [{ topic: "hits", partition: 1, errorCode: 10, baseOffset: 123n }] });
  });

  it("carries messages through frame chunks unchanged, growing past the chunk size", () => {
    const messages = Array.from({ length: 500 }, (_, i) => ({ key: String(i), value: `{"n":${i},"s":"${"x".repeat(i)}é"}` }));
    const chunk = framesOf(messages);
    assert.equal(chunk.count, 500);
    const back: { key: string; value: string }[] = [];
    forEachFrame(chunk, (key, value) => back.push({ key: key.toString(), value: value.toString() }));
    assert.deepEqual(back, messages);
    const writer = new FrameWriter(16);
    const at = writer.begin("k", 64);
    writer.commit(at + writer.buffer.write("value", at));
    forEachFrame(writer.take(), (key, value) => assert.deepEqual([key.toString(), value.toString()], ["k", "value"]));
  });
});
