// The supervisor stops only processes it started: a pid file naming someone else's process is
// treated as stale, never signalled.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { Supervisor } from "../../src/services/supervisor.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "stand-supervisor-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("starts a detached process, sees it alive by pid and marker, stops it with the signal given", async () => {
  const supervisor = new Supervisor(path.join(dir, "pids"));
  const marker = path.join(dir, "marker-sleeper");
  const pid = supervisor.start({
    service: "sleeper",
    command: process.execPath,
    args: ["-e", "setTimeout(() => {}, 300000)", marker],
    logFile: path.join(dir, "sleeper.log"),
    marker,
  });
  assert.equal(supervisor.runningPid("sleeper"), pid);
  assert.equal(await supervisor.stop("sleeper", "SIGTERM", 5000), "stopped");
  assert.equal(supervisor.runningPid("sleeper"), undefined);
});

test("a pid file pointing at a process we did not start is never signalled", async () => {
  const supervisor = new Supervisor(path.join(dir, "pids2"));
  const pidFile = supervisor.pidFile("foreign");
  mkdirSync(path.dirname(pidFile), { recursive: true });
  // our own test process: alive, but its command line does not carry the marker
  writeFileSync(pidFile, JSON.stringify({ pid: process.pid, marker: path.join(dir, "not-this-one"), startedAt: "x" }));
  assert.equal(supervisor.runningPid("foreign"), undefined);
  writeFileSync(pidFile, JSON.stringify({ pid: process.pid, marker: path.join(dir, "not-this-one"), startedAt: "x" }));
  assert.equal(await supervisor.stop("foreign", "SIGKILL", 100), "not-running");
  // still here: the SIGKILL was not sent
});
