// The job queue's pool waits for a Postgres that went away (a restart) instead of failing at once:
// graphile-worker marks jobs done or failed through it without awaiting, so a refused connect there
// used to crash the runner. A local TCP forwarder plays "Postgres is restarting" on a free port.
import assert from "node:assert/strict";
import net from "node:net";
import { describe, it } from "node:test";
import { loadStandConfig, postgresUrl } from "../../src/config/stand.ts";
import { createPatientPool } from "../../src/runner/db.ts";

const realUrl = new URL(postgresUrl(loadStandConfig().postgres.database));

/** A port nothing listens on yet (taken from the OS, then released). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts forwarding 127.0.0.1:port to the real Postgres. */
async function forward(port: number): Promise<net.Server> {
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(realUrl.port), realUrl.hostname);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on("error", () => outbound.destroy());
    outbound.on("error", () => inbound.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return server;
}

function urlOnPort(port: number, database = realUrl.pathname.slice(1)): string {
  const url = new URL(realUrl.href);
  url.port = String(port);
  url.pathname = `/${database}`;
  return url.href;
}

describe("the job queue's patient pool", () => {
  it("connect() waits for a server that comes up late, then works", async () => {
    const port = await freePort();
    const retries: number[] = [];
    const pool = createPatientPool(urlOnPort(port), 2, { patienceMs: 20_000, onRetry: (_err, attempts) => retries.push(attempts) });
    let server: net.Server | undefined;
    const late = setTimeout(() => void forward(port).then((s) => (server = s)), 1200);
    try {
      const client = await pool.connect();
      const { rows } = await client.query<{ one: number }>("select 1 as one");
      client.release();
      assert.equal(rows[0]?.one, 1);
      assert.ok(retries.length >= 2, `it retried while the port refused (attempts seen: ${retries.join(",")})`);
      // the callback form (pool.query) is pg's own: it still works through the same pool
      assert.equal((await pool.query<{ two: number }>("select 2 as two")).rows[0]?.two, 2);
    } finally {
      clearTimeout(late);
      await pool.end();
      server?.close();
    }
  });

  it("connect() also waits through a server that accepts and closes during the handshake (one shutting down), then works", async () => {
    const port = await freePort();
    // a Postgres going down may take the TCP connection and end it before the startup reply:
    // pg says "Connection terminated unexpectedly" with no code
    let hangups = 0;
    const closing = net.createServer((socket) => {
      hangups++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => closing.listen(port, "127.0.0.1", resolve));
    const errors: string[] = [];
    const pool = createPatientPool(urlOnPort(port), 2, { patienceMs: 20_000, onRetry: (err) => errors.push(String(err)) });
    let server: net.Server | undefined;
    const comeBack = async () => {
      await new Promise<void>((resolve) => closing.close(() => resolve()));
      server = await forward(port);
    };
    try {
      const connecting = pool.connect();
      let gaveUp: unknown;
      connecting.catch((err: unknown) => (gaveUp = err));
      // the server keeps hanging up until the test brings it back: wait for two hang-ups, or for
      // connect() to give up (the fault this test is about)
      await new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (hangups >= 2 || gaveUp !== undefined) {
            clearInterval(check);
            resolve();
          }
        }, 20);
      });
      assert.equal(gaveUp, undefined, `connect() gave up on a hang-up instead of waiting: ${String(gaveUp)}`);
      await comeBack();
      const client = await connecting;
      const { rows } = await client.query<{ one: number }>("select 1 as one");
      client.release();
      assert.equal(rows[0]?.one, 1);
      assert.ok(errors.some((e) => /terminated/i.test(e)), `it retried on the hang-up: ${errors.join(" | ")}`);
    } finally {
      closing.close();
      await pool.end();
      server?.close();
    }
  });

  it("gives up with the connection error once its patience is spent", async () => {
    const port = await freePort();
    let retries = 0;
    const pool = createPatientPool(urlOnPort(port), 1, { patienceMs: 700, onRetry: () => retries++ });
    const started = Date.now();
    try {
      await assert.rejects(pool.connect(), (err: NodeJS.ErrnoException) => err.code === "ECONNREFUSED");
      assert.ok(Date.now() - started >= 700, "it waited its patience out");
      assert.ok(retries >= 1);
    } finally {
      await pool.end();
    }
  });

  it("does not wait on errors a restart cannot fix (a database that does not exist)", async () => {
    let retries = 0;
    const pool = createPatientPool(urlOnPort(Number(realUrl.port), "no_such_database_here"), 1, { patienceMs: 20_000, onRetry: () => retries++ });
    const started = Date.now();
    try {
      await assert.rejects(pool.connect(), (err: { code?: string }) => err.code === "3D000");
      assert.equal(retries, 0);
      assert.ok(Date.now() - started < 5000);
    } finally {
      await pool.end();
    }
  });
});
