// The process entry: src/server/main.ts starts the engine and the API from the stand config, serves
// the DAGs of dags/index.ts, and on SIGTERM answers open waits, stops, and leaves no connection.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { repoRoot, standConfigPath } from "../../src/config/stand.ts";
import { createTestDatabase, type TestDatabase } from "../../testkit/runner/runner-db.ts";
import { call } from "../../testkit/runner/api-app.ts";

const TOKEN = "server-test-token";

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForHealth(baseUrl: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) assert.fail(`server exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(`${baseUrl}/api/v2/monitor/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  assert.fail(`server did not answer within 60 s (under the gate's load its first parse of the DAG folders takes a while):\n${output()}`);
}

void describe("runner server process", () => {
  let db: TestDatabase;
  let tempDir: string;
  let child: ChildProcess;
  let baseUrl: string;
  let output = "";

  before(async () => {
    db = await createTestDatabase();
    tempDir = mkdtempSync(path.join(os.tmpdir(), "runner-server-"));
    const port = await freePort();
    const config = readFileSync(standConfigPath(), "utf8")
      .replace(/^(\s*runner_database:\s*).*$/m, `$1${db.name}`)
      .replace(/^(\s*api_port:\s*)\d+/m, `$1${port}`)
      .replace(/^(\s*api_token:\s*).*$/m, `$1${TOKEN}`);
    const configFile = path.join(tempDir, "stand.yaml");
    writeFileSync(configFile, config);
    baseUrl = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ["--import", "tsx", path.join(repoRoot, "src/server/main.ts")], {
      cwd: repoRoot,
      // Passing the environment on to the child, not reading configuration from it.
      // eslint-disable-next-line no-restricted-properties
      env: { ...process.env, STAND_CONFIG: configFile, LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await waitForHealth(baseUrl, child, () => output);
  });
  after(async () => {
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    rmSync(tempDir, { recursive: true, force: true });
    await db.drop();
  });

  void it("serves the DAGs of dags/index.ts with the token from the config", async () => {
    const dags = await call<{ dags: { dag_id: string }[] }>(baseUrl, "GET", "/api/v2/dags");
    assert.ok(dags.body.dags.some((d) => d.dag_id === "example_hello"), dags.text);
    const refused = await call(baseUrl, "PATCH", "/api/v2/dags/example_hello", { body: { is_paused: true }, headers: { Authorization: "Bearer wrong-token" } });
    assert.equal(refused.status, 403);
    const run = await call<DagRunResponse>(baseUrl, "POST", "/api/v2/dags/example_hello/dagRuns", {
      headers: { Authorization: `Bearer ${TOKEN}` },
      body: { conf: { name: "server test" } },
    });
    assert.equal(run.status, 200, run.text);
    const done = await call<DagRunResponse>(baseUrl, "GET", `/api/v2/dags/example_hello/dagRuns/${encodeURIComponent(run.body.dag_run_id)}/wait?timeout=30`);
    assert.equal(done.body.state, "success");
  });

  void it("SIGTERM answers an open wait with the current state, then exits 0 leaving no connection", async () => {
    const headers = { Authorization: `Bearer ${TOKEN}` };
    assert.equal((await call(baseUrl, "PATCH", "/api/v2/dags/example_hello", { headers, body: { is_paused: true } })).status, 200);
    const run = await call<DagRunResponse>(baseUrl, "POST", "/api/v2/dags/example_hello/dagRuns", { headers, body: { dag_run_id: "held" } });
    assert.equal(run.status, 200, run.text);
    const waiting = call<DagRunResponse>(baseUrl, "GET", "/api/v2/dags/example_hello/dagRuns/held/wait?timeout=120");
    await sleep(300);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const signalledAt = Date.now();
    child.kill("SIGTERM");
    const answered = await waiting;
    assert.equal(answered.status, 200, answered.text);
    assert.equal(answered.body.state, "queued");
    assert.equal(answered.headers.get("x-run-terminal"), "false");
    assert.equal(await exited, 0, output);
    assert.ok(Date.now() - signalledAt < 15_000, "stopped within the grace period");
    assert.match(output, /runner stopped cleanly/);
    // db.drop() in after() fails if the process left a connection open.
  });
});
