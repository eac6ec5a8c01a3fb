// The world guard's before-snapshot (src/world-ops/guard.ts, save and check): only "your stand was
// not running" passes without a comparison, said as such; a missing, unreadable or corrupt file
// fails the check, naming the file. Needs no service: each red path stops before any stand is read.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { launchArgs, repoRoot } from "../../src/config/stand.ts";
import { childExitCode, childOutput } from "../../src/errors.ts";
import { readSavedWorld } from "../../src/world-ops/guard.ts";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), "guard-saved-"));
const file = (name: string, text: string): string => {
  const full = path.join(dir, name);
  writeFileSync(full, text);
  return full;
};

/** `guard.ts check` as scripts/test-stand.sh calls it; its exit code and output. */
async function check(before: string): Promise<{ code: number; out: string }> {
  const args = launchArgs("src/world-ops/guard.ts", "check", "--config", "test/stand.none.yaml", "--before", before);
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd: repoRoot, timeout: 60_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const { stdout, stderr } = childOutput(err);
    return { code: childExitCode(err), out: stdout + stderr };
  }
}

const snapshot = { position: "9", latestWorldRun: null, activeWorldRuns: 0, tables: { "ch1 ods.event": 10 }, topicEnds: { "hits/0": "5" }, groupOffsets: {} };

describe("the world guard's before-snapshot", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a saved snapshot and the 'not running' record", () => {
    assert.deepEqual(readSavedWorld(file("ok.json", JSON.stringify(snapshot))), { kind: "snapshot", snapshot });
    const notRunning = readSavedWorld(file("off.json", JSON.stringify({ standRunning: false, config: "stand.yaml", at: "2026-12-04T00:00:00Z" })));
    assert.equal(notRunning.kind, "not-running");
  });

  it("refuses a missing file, one that is not JSON and one that is not a snapshot, naming the file and the problem", () => {
    const missing = path.join(dir, "absent.json");
    assert.throws(() => readSavedWorld(missing), (err: Error) => err.message.includes(missing) && /cannot be read/.test(err.message));
    const corrupt = file("corrupt.json", '{"position": "9", "tab');
    assert.throws(() => readSavedWorld(corrupt), (err: Error) => err.message.includes(corrupt) && /not JSON.*corrupt/.test(err.message));
    const empty = file("empty.json", "");
    assert.throws(() => readSavedWorld(empty), (err: Error) => err.message.includes(empty) && /not JSON/.test(err.message));
    const wrong = file("wrong.json", JSON.stringify({ ...snapshot, tables: { "ch1 ods.event": "ten" } }));
    assert.throws(() => readSavedWorld(wrong), (err: Error) => err.message.includes(wrong) && /tables\.ch1 ods\.event/.test(err.message));
    const half = file("half.json", JSON.stringify({ standRunning: false }));
    assert.throws(() => readSavedWorld(half), (err: Error) => err.message.includes(half) && /not a world snapshot/.test(err.message));
  });

  it("check fails on a corrupt or missing before-snapshot, and passes only a stand that was not running, saying so", async () => {
    const corrupt = await check(file("corrupt-cli.json", "{not json"));
    assert.equal(corrupt.code, 1, corrupt.out);
    assert.match(corrupt.out, /corrupt-cli\.json is not JSON/);
    assert.doesNotMatch(corrupt.out, /exactly as it was|nothing to guard/);

    const missing = await check(path.join(dir, "never-saved.json"));
    assert.equal(missing.code, 1, missing.out);
    assert.match(missing.out, /never-saved\.json cannot be read/);

    const off = await check(file("off-cli.json", JSON.stringify({ standRunning: false, config: "stand.yaml", at: "2026-12-04T00:00:00Z" })));
    assert.equal(off.code, 0, off.out);
    assert.match(off.out, /your stand was not running \(stand\.yaml, .*\), nothing to guard/);
  });
});
