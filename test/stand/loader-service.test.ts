// The loader as a stand service (src/services/loader-service.ts), with real processes: a stand-in entry
// point written here (an HTTP /health like src/loader/main.ts's, a log line on SIGTERM) runs under
// its own state directory and a free port, so the test stand's own loader is never touched. It is
// started, reported by status, not started twice, restarted on changed code, stopped with SIGTERM,
// and a pid file naming a process without the entry path in its command line is never signalled.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { loadStandConfig } from "../../src/config/stand.ts";
import { ensureLoader, loaderPaths, loaderPid, loaderStatus, stopLoader } from "../../src/services/loader-service.ts";
import { PortTakenError, type StandContext } from "../../src/services/service.ts";
import { standPaths } from "../../src/services/paths.ts";
import { isProcessOurs, Supervisor } from "../../src/services/supervisor.ts";

const dir = mkdtempSync(path.join(os.tmpdir(), "stand-loader-"));
const entry = path.join(dir, "fake-loader-main.ts");
/** While this file exists the stand-in answers 503 with a reason, as the loader does when it failed. */
const failFlag = path.join(dir, "failed");

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function writeStandIn(port: number): void {
  writeFileSync(
    entry,
    `import { existsSync } from "node:fs";
import { createServer } from "node:http";
const server = createServer((req, res) => {
  if (req.url !== "/health") return void res.writeHead(404).end();
  const failed = existsSync(${JSON.stringify(failFlag)});
  res.writeHead(failed ? 503 : 200, { "content-type": "application/json" });
  const body = failed ? { status: "unhealthy", state: "failed", detail: "could not start consuming" } : { status: "healthy", state: "stopped" };
  res.end(JSON.stringify(body));
});
server.listen(${port}, "127.0.0.1", () => console.log("stand-in loader listening on ${port}"));
process.on("SIGTERM", () => {
  console.log("stand-in loader: SIGTERM, flushed and committed");
  server.close(() => process.exit(0));
});
`,
  );
}

function testContext(port: number): StandContext {
  const base = loadStandConfig();
  const config = { ...base, loader: { ...base.loader, port } };
  const root = path.join(dir, "state");
  mkdirSync(root, { recursive: true });
  return { config, paths: { ...standPaths(base), root }, supervisor: new Supervisor(path.join(root, "pids")), print: () => undefined };
}

/** Alive and not a zombie (a detached child of this process may not be reaped yet). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}

const port = await freePort();
writeStandIn(port);
const ctx = testContext(port);
const options = { entry };

after(async () => {
  await stopLoader(ctx, options);
  rmSync(dir, { recursive: true, force: true });
});

void describe("loader service", () => {
  void test("starts it once: pid file and log under <state>/loader/, healthy in status with its state", async () => {
    assert.equal(await ensureLoader(ctx, options), "started");
    const pid = loaderPid(ctx, options);
    assert.ok(pid !== undefined && isAlive(pid));
    const paths = loaderPaths(ctx);
    assert.equal(paths.dir, path.join(ctx.paths.root, "loader"));
    const record = JSON.parse(readFileSync(path.join(paths.dir, "loader.pid"), "utf8")) as { pid: number; marker: string };
    assert.deepEqual({ pid: record.pid, marker: record.marker }, { pid, marker: entry });
    assert.match(readFileSync(paths.log, "utf8"), new RegExp(`stand-in loader listening on ${port}`));

    const status = await loaderStatus(ctx, options);
    assert.deepEqual(
      { name: status.name, port: status.port, pid: status.pid, healthy: status.healthy, detail: status.detail },
      { name: "loader", port, pid, healthy: true, detail: `pid ${pid}, state stopped` },
    );

    assert.equal(await ensureLoader(ctx, options), "running", "a second ensure starts nothing");
    assert.equal(loaderPid(ctx, options), pid, "the same process carries on");
  });

  void test("status reports an unhealthy loader with the reason its /health gives", async () => {
    const pid = loaderPid(ctx, options);
    writeFileSync(failFlag, "");
    try {
      const status = await loaderStatus(ctx, options);
      assert.equal(status.healthy, false);
      assert.equal(status.detail, `pid ${pid} alive but unhealthy: health answered 503, status unhealthy, state failed: could not start consuming`);
    } finally {
      rmSync(failFlag);
    }
    assert.equal((await loaderStatus(ctx, options)).healthy, true);
  });

  void test("restarts it when the code it was started from changed", async () => {
    const before = loaderPid(ctx, options);
    assert.ok(before !== undefined);
    writeFileSync(loaderPaths(ctx).fingerprint, "older code\n");
    assert.equal(await ensureLoader(ctx, options), "restarted");
    const after = loaderPid(ctx, options);
    assert.ok(after !== undefined && after !== before && !isAlive(before));
    assert.match(readFileSync(loaderPaths(ctx).log, "utf8"), /SIGTERM, flushed and committed/, "stopped with SIGTERM, not killed");
  });

  void test("a pid file naming a process without the entry path is never signalled", async () => {
    await stopLoader(ctx, options);
    const foreign = spawn(process.execPath, ["-e", "setTimeout(() => {}, 120000)"], { stdio: "ignore" });
    try {
      assert.ok(foreign.pid !== undefined);
      const record = { pid: foreign.pid, marker: entry, startedAt: new Date().toISOString() };
      const pidFile = path.join(loaderPaths(ctx).dir, "loader.pid");
      writeFileSync(pidFile, JSON.stringify(record));
      assert.equal(isProcessOurs(record), false);
      assert.equal(loaderPid(ctx, options), undefined, "not ours, so not running");
      writeFileSync(pidFile, JSON.stringify(record));
      assert.equal(await stopLoader(ctx, options), "not-running");
      assert.equal(foreign.exitCode, null);
      assert.equal(foreign.signalCode, null);
      assert.ok(isAlive(foreign.pid), "the foreign process was not signalled");
      assert.equal(existsSync(pidFile), false, "the stale pid file is removed");
      const status = await loaderStatus(ctx, options);
      assert.deepEqual([status.healthy, status.detail], [false, "not running"]);
    } finally {
      foreign.kill("SIGKILL");
    }
  });

  void test("refuses to start when another process holds the port, and leaves it alone", async () => {
    const squatter = createServer((_req, res) => res.end("not the loader"));
    await new Promise<void>((resolve) => squatter.listen(port, "127.0.0.1", resolve));
    try {
      await assert.rejects(ensureLoader(ctx, options), (err: unknown) => err instanceof PortTakenError && err.port === port);
      assert.equal(loaderPid(ctx, options), undefined);
      assert.ok(squatter.listening);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  void test("stops ours with SIGTERM", async () => {
    const terms = (): number => (readFileSync(loaderPaths(ctx).log, "utf8").match(/SIGTERM, flushed and committed/g) ?? []).length;
    assert.equal(await ensureLoader(ctx, options), "started");
    const pid = loaderPid(ctx, options);
    assert.ok(pid !== undefined);
    const before = terms();
    assert.equal(await stopLoader(ctx, options), "stopped");
    assert.ok(!isAlive(pid));
    assert.equal(loaderPid(ctx, options), undefined);
    assert.equal(terms(), before + 1, "it got SIGTERM and exited on its own");
  });
});
