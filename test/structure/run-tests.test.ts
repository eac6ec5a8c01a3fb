// make test's own guards (scripts/run-tests.sh): a skipped test fails the lane that ran it, since a
// skip proves nothing (a CI run once failed on a "service-free" file whose every test skipped
// locally for want of Kafka); and the service-free list holds only files that exist and that no
// stand-only switch (the CI environment) turns red.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { repoRoot } from "../../src/config/stand.ts";
import { childExitCode, childOutput } from "../../src/errors.ts";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), "run-tests-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function checkSkips(tap: string): Promise<{ code: number; out: string }> {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.tap`);
  writeFileSync(file, tap);
  try {
    const { stdout } = await run("bash", ["scripts/run-tests.sh", "--check-skips", file, "the files tried"], { cwd: repoRoot });
    return { code: 0, out: stdout };
  } catch (err) {
    const { stdout } = childOutput(err);
    const code = childExitCode(err);
    return { code, out: stdout };
  }
}

const passing = ["TAP version 13", "# Subtest: a suite", "    ok 1 - it works", "ok 1 - a suite", "1..1", ""].join("\n");

describe("make test's guards (scripts/run-tests.sh)", () => {
  it("a run whose tests all ran passes the skip check", async () => {
    const { code, out } = await checkSkips(passing);
    assert.equal(code, 0, out);
  });

  it("a skipped test fails the lane, and is named", async () => {
    const skipped = passing.replace("    ok 1 - it works", "    ok 1 - it works\n    ok 2 - needs Kafka # SKIP no Kafka at 127.0.0.1:29242");
    const { code, out } = await checkSkips(skipped);
    assert.equal(code, 1, out);
    assert.match(out, /1 test\(s\) of the files tried skipped/);
    assert.match(out, /needs Kafka # SKIP no Kafka/);
  });

  it("the service-free list names files that exist, none of which reads the CI switch", () => {
    const listed = readFileSync(path.join(repoRoot, "test", "service-free.txt"), "utf8")
      .split("\n")
      .filter((line) => line !== "" && !line.startsWith("#"));
    assert.ok(listed.length > 20, "the list is not empty");
    for (const file of listed) {
      assert.ok(existsSync(path.join(repoRoot, file)), `${file} is listed but does not exist (scripts/classify-tests.ts)`);
      assert.doesNotMatch(readFileSync(path.join(repoRoot, file), "utf8"), /processEnv\.ci/, `${file} behaves otherwise in CI: it is not service-free`);
    }
  });
});
