// A snapshot's copy (src/snapshots/tree.ts) on a tree of its own, no service: it copies and
// links what it is told, and it gives the event loop back while it works. In a full make test a save
// of thousands of files held the loop for seconds with sync fs calls; the runner's lease heartbeat
// could not beat, the try was taken over while it still copied, and two tries wrote one snapshot.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { copyTree, YIELD_EVERY_FILES } from "../../src/snapshots/tree.ts";

const dir = mkdtempSync(path.join(tmpdir(), "snapshot-tree-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function makeTree(root: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const sub = path.join(root, `d${i % 20}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `f${i}.bin`), `file ${i}\n`);
  }
}

describe("a snapshot's copy of a tree", () => {
  it("copies or links each file as told, and the copy equals the source", async () => {
    const from = path.join(dir, "a-from");
    makeTree(from, 300);
    const copied = await copyTree(from, path.join(dir, "a-to"), (rel) => rel.startsWith("d1/"));
    assert.equal(copied.files, 300);
    assert.equal(copied.linkedFiles, 15, "d1 holds 15 of the 300 files, linked");
    assert.equal(readFileSync(path.join(dir, "a-to", "d3", "f3.bin"), "utf8"), "file 3\n");
    assert.equal(statSync(path.join(dir, "a-to", "d1", "f1.bin")).ino, statSync(path.join(from, "d1", "f1.bin")).ino, "a linked file is the same inode");
    assert.notEqual(statSync(path.join(dir, "a-to", "d3", "f3.bin")).ino, statSync(path.join(from, "d3", "f3.bin")).ino, "a copied file is not");
  });

  it("gives the event loop back while it copies: timers run during a copy of thousands of files", async () => {
    const files = YIELD_EVERY_FILES * 10;
    const from = path.join(dir, "b-from");
    makeTree(from, files);
    let beats = 0;
    const heartbeat = setInterval(() => (beats += 1), 0); // as a lease heartbeat's timer, due at once
    let copied;
    try {
      copied = await copyTree(from, path.join(dir, "b-to"), () => false);
    } finally {
      clearInterval(heartbeat);
    }
    assert.equal(copied.files, files);
    // with sync calls only, no timer could run until the copy returned: 0 beats
    assert.ok(beats >= 10, `a timer ran ${beats} times during the copy of ${files} files (at least once per ${YIELD_EVERY_FILES})`);
  });
});
