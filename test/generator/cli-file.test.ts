// The CLI as a process, writing to a file: the bytes of a day equal the passport's sha256, flags
// come from GENERATOR_* variables as well, and bad invocations exit non-zero with a reason.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { launchArgs, repoRoot } from "../../src/config/stand.ts";
import { sha256Hex } from "../../generator/src/catalog.ts";
import { main } from "../../generator/src/cli.ts";
import { readPassport } from "../../testkit/world/generator-fixtures.ts";

const scratch = mkdtempSync(path.join(tmpdir(), "generator-cli-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the CLI in a child with only the given environment (no inherited GENERATOR_* leaks in). */
function runCli(args: string[], env: Record<string, string> = {}): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, launchArgs("generator/src/cli.ts", ...args), {
    cwd: repoRoot, env, encoding: "utf8", timeout: 120_000,
  });
  return { status: result.status, stderr: result.stderr };
}

describe("generator CLI, file output", () => {
  it("writes one JSON per line whose bytes match the passport's sha256 of the day", async () => {
    const file = path.join(scratch, "day1.jsonl");
    assert.equal(await main(["batch", "--day", "1", "--file", file]), 0);
    const bytes = readFileSync(file);
    assert.equal(sha256Hex(bytes), readPassport().days[1]?.sha256);
    assert.ok(bytes.toString("utf8").endsWith("}\n"));
  });

  it("takes every flag from the environment too, and honours --limit", () => {
    const file = path.join(scratch, "env.jsonl");
    const run = runCli(["batch"], { GENERATOR_DAY: "2", GENERATOR_FILE: file, GENERATOR_LIMIT: "250", GENERATOR_SEED: "20260601" });
    assert.equal(run.status, 0, run.stderr);
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    assert.equal(lines.length, 250);
    assert.match(lines[0] ?? "", /"EventDate":"2026-06-03"/);
    assert.match(run.stderr, /250\/250 sent/);
  });

  it("writes order snapshots matching the passport", async () => {
    const file = path.join(scratch, "orders.jsonl");
    assert.equal(await main(["snapshot", "--day", "0", "--days", "7", "--file", file]), 0);
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    assert.equal(lines.length, readPassport().totals.snapshot_orders);
  });

  it("refuses a missing day, both or neither output, and a bad broker address", () => {
    const cases: [string[], RegExp][] = [
      [["batch", "--file", path.join(scratch, "x")], /--day .* is required/],
      [["batch", "--day", "0"], /exactly one of --brokers/],
      [["batch", "--day", "0", "--file", "x", "--brokers", "h:1"], /exactly one of --brokers/],
      [["batch", "--day", "0", "--brokers", "nohost"], /not host:port/],
      [["batch", "--day", "-1", "--file", "x"], /--day must be an integer/],
      [["inventory"], /--write or --check/],
    ];
    for (const [args, message] of cases) {
      const run = runCli(args);
      assert.notEqual(run.status, 0, args.join(" "));
      assert.match(run.stderr, message, args.join(" "));
    }
  });
});

describe("generator CLI, live mode", () => {
  it("plays a day paced on the model clock (here ×200,000), the same bytes as batch, logging its lag", () => {
    const file = path.join(scratch, "live.jsonl");
    const run = runCli(["live", "--day", "4", "--speed", "200000", "--lag-log-seconds", "0.1", "--file", file]);
    assert.equal(run.status, 0, run.stderr);
    assert.equal(sha256Hex(readFileSync(file)), readPassport().days[4]?.sha256);
    assert.match(run.stderr, /live: model time \d\d:\d\d:\d\d local, [\d,]+\/[\d,]+ sent, lag [\d.]+ s/);
  });
});
