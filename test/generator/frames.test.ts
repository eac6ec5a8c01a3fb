// Frame chunks, the bytes `batch` renders hits into and hands to the sinks: keys and values come
// back unchanged (UTF-8 too), and a chunk grows past its initial size.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FrameWriter, forEachFrame } from "../../generator/src/frames.ts";

function writeFrame(writer: FrameWriter, key: string, value: string): void {
  const at = writer.begin(key, 3 * value.length);
  writer.commit(at + writer.buffer.write(value, at, "utf8"));
}

describe("frame chunks", () => {
  it("carry keys and values through unchanged, growing past the chunk size", () => {
    const messages = Array.from({ length: 500 }, (_, i) => ({ key: String(i), value: `{"n":${i},"s":"${"x".repeat(i)}é日本"}` }));
    const writer = new FrameWriter(16);
    for (const m of messages) writeFrame(writer, m.key, m.value);
    assert.equal(writer.messages, 500);
    const chunk = writer.take();
    assert.equal(chunk.count, 500);
    const back: { key: string; value: string }[] = [];
    forEachFrame(chunk, (key, value) => back.push({ key: key.toString(), value: value.toString() }));
    assert.deepEqual(back, messages);
    assert.equal(writer.messages, 0, "take starts a new chunk");
  });
});
