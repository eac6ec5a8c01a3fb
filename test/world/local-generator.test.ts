// The local-process path of runGenerator: the bundle runs its command when started through a
// symlinked directory (the entry-point check compares real paths), and a generator that exits 0
// without a line on stderr fails the task instead of passing for a play that sent nothing.
import assert from "node:assert/strict";
import { mkdtemp, rm, symlink, writeFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { WorldTaskError } from "../../src/world/io.ts";
import { buildGenerator, type GeneratorBuild } from "../../tasks/generator-build.ts";
import { runGenerator } from "../../tasks/generator-run.ts";
import { recordingIo } from "../../testkit/world/recording-io.ts";

let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "local-generator-"));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("the bundle started through a symlinked directory plays its day", async () => {
  const built = await buildGenerator({ ...recordingIo(), mode: "local" });
  assert.equal(built.mode, "local");
  if (built.mode !== "local") return;
  const link = path.join(dir, "linked");
  await symlink(path.dirname(built.file), link);
  const out = path.join(dir, "day0.jsonl");
  const io = recordingIo();
  const run = await runGenerator({ ...io, build: { ...built, file: path.join(link, path.basename(built.file)) }, args: ["batch", "--day", "0", "--days", "1", "--file", out] });
  assert.equal(run.exitCode, 0);
  assert.ok(io.lines.some((l) => /batch finished: [\d,]+ hits/.test(l)), io.lines.join("\n"));
  const lines = (await readFile(out, "utf8")).split("\n").filter((l) => l !== "");
  assert.ok(lines.length > 10_000, `day 0 has its hits: ${lines.length}`);
});

test("a generator that exits 0 and says nothing fails the task", async () => {
  const silent = path.join(dir, "silent.mjs");
  await writeFile(silent, "process.exitCode = 0;\n");
  const build: GeneratorBuild = { mode: "local", hash: "silent", file: silent, reused: true };
  await assert.rejects(runGenerator({ ...recordingIo(), build, args: ["batch", "--day", "0"] }), (err: unknown) => {
    assert.ok(err instanceof WorldTaskError);
    assert.match(err.message, /exited 0 without writing a line: it did not run 'batch --day 0'/);
    return true;
  });
});
