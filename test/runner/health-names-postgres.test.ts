// The runner's health names the Postgres it cannot reach (which host, port and database, and the
// error), instead of a bare "unhealthy": GET /api/v2/monitor/health carries it as metadatabase.detail.
import assert from "node:assert/strict";
import net from "node:net";
import { it } from "node:test";
import pg from "pg";
import { createRunnerService } from "../../src/runner/postgres-service.ts";
import type { DagRegistry } from "../../src/runner/registry.ts";
import type { RunWaiters } from "../../src/runner/run-waiters.ts";

/** A loopback port nothing listens on: bound, read, closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

it("a runner whose Postgres does not answer says so, naming host, port, database and the error", async () => {
  const port = await closedPort();
  const pool = new pg.Pool({ host: "127.0.0.1", port, database: "runner", user: "stand", password: "x", connectionTimeoutMillis: 2000 });
  pool.on("error", () => undefined);
  try {
    const service = createRunnerService({ pool, registry: {} as DagRegistry, waiters: {} as RunWaiters, workerId: "test", leaseSeconds: 30 });
    const health = await service.health();
    assert.equal(health.metadatabase, "unhealthy");
    assert.equal(health.scheduler, "unhealthy");
    assert.match(health.metadatabaseDetail ?? "", new RegExp(`cannot reach the runner's Postgres at 127\\.0\\.0\\.1:${port}/runner: .*ECONNREFUSED`));
  } finally {
    await pool.end();
  }
});
