// Every stand service answers its health check, and a second `up` on a running stand changes nothing.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";
import { launchArgs, repoRoot } from "../../src/config/stand.ts";
import { standContext, standStatus } from "../../src/stand/stand.ts";

const execFileAsync = promisify(execFile);

test("every service of the stand answers its health check", async () => {
  const statuses = (await standStatus(standContext(() => undefined))).services.filter((s) => s.name !== "runner" && s.name !== "keeper");
  const names = statuses.map((s) => s.name);
  assert.deepEqual(names, ["postgres", "zookeeper", "clickhouse-ch1", "clickhouse-ch2", "kafka", "prometheus", "loader"]);
  for (const s of statuses) {
    assert.ok(s.healthy, `${s.name} on port ${s.port} is not healthy: ${s.detail}`);
    assert.ok(s.pid !== undefined, `${s.name} answers but has no live pid file: ${s.detail}`);
  }
});

test("a second `up` on a running stand starts nothing and returns in seconds", async () => {
  const before = (await standStatus(standContext(() => undefined))).services;
  const started = Date.now();
  const { stdout } = await execFileAsync("node", launchArgs("src/stand/cli.ts", "up"), { cwd: repoRoot });
  const seconds = (Date.now() - started) / 1000;
  assert.ok(seconds < 10, `second up took ${seconds} s`);
  assert.doesNotMatch(stdout, /started pid/, "a second up must not launch anything");
  const after = (await standStatus(standContext(() => undefined))).services;
  assert.deepEqual(after.map((s) => s.pid), before.map((s) => s.pid), "pids changed: something restarted");
});
