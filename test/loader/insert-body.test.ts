// An INSERT body is the batch's lines as they lie in memory: adjacent lines of one slab are one
// chunk, anything else starts a new one, and the bytes sent are exactly the lines in order.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { jsonEachRowChunks } from "../../src/loader/clickhouse-sink.ts";
import { SpliceLineWriter } from "../../src/loader/splice.ts";

function line(writer: SpliceLineWriter, table: string, n: number): Buffer {
  const text = `{"n":${n}}`;
  return writer.line(table, Buffer.from(text), text, undefined, { n });
}

describe("jsonEachRowChunks", () => {
  it("joins the lines written one after another into one view, with no copy", () => {
    const writer = new SpliceLineWriter();
    const lines = Array.from({ length: 1000 }, (_, i) => line(writer, "t", i));
    const chunks = jsonEachRowChunks(lines);
    assert.equal(chunks.length, 1);
    assert.equal(chunks[0]?.buffer, lines[0]?.buffer, "a view of the slab, not a copy");
    assert.deepEqual(Buffer.concat(chunks), Buffer.concat(lines));
  });

  it("starts a new chunk where lines are not adjacent: other tables' lines between, a salvage half, another slab", () => {
    const writer = new SpliceLineWriter();
    const a: Buffer[] = [];
    const b: Buffer[] = [];
    for (let i = 0; i < 50; i++) {
      a.push(line(writer, "a", i));
      b.push(line(writer, "b", i));
    }
    // per-table slabs: each table's lines stay adjacent
    assert.equal(jsonEachRowChunks(a).length, 1);
    const picked = a.filter((_, i) => i % 2 === 0); // rows with gaps between them
    assert.equal(jsonEachRowChunks(picked).length, picked.length);
    assert.deepEqual(Buffer.concat(jsonEachRowChunks(picked)), Buffer.concat(picked));
    const mixed = [...a.slice(0, 10), Buffer.from('{"x":1}\n'), ...a.slice(10, 20)];
    const chunks = jsonEachRowChunks(mixed);
    assert.equal(chunks.length, 3);
    assert.deepEqual(Buffer.concat(chunks), Buffer.concat(mixed));
    assert.deepEqual(jsonEachRowChunks([]), []);
  });

  it("a line that moved to a new slab (the old one full) starts a new chunk", () => {
    const writer = new SpliceLineWriter();
    const big = "x".repeat(300 * 1024);
    const lines: Buffer[] = [];
    for (let i = 0; i < 8; i++) lines.push(writer.line("t", Buffer.from(big), big, undefined, { s: big }));
    const chunks = jsonEachRowChunks(lines);
    assert.ok(chunks.length >= 2 && chunks.length < lines.length, `${chunks.length} chunks for ${lines.length} lines over 1 MiB slabs`);
    assert.deepEqual(Buffer.concat(chunks), Buffer.concat(lines));
  });
});
