// graphile-worker marks a job done or failed with a statement it does not await: when Postgres
// terminated that statement's connection (a restart: 57P01), the rejection reached nobody and the
// runner process exited. The runner's queue pool sends such a job write again on a new connection.
// Each test makes the fault happen by construction: the job's row is locked by the test, so the
// job write blocks; the test terminates the blocked backend (what a restart does to every backend),
// then lets the row go and checks the write landed and no promise was left rejected.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Logger, run as runGraphile } from "graphile-worker";
import pg from "pg";
import { loadStandConfig, postgresUrl, repoRoot } from "../../src/config/stand.ts";
import { createPatientPool, JOB_WRITE_STATEMENTS } from "../../src/runner/db.ts";
import { graphileWorkerPreset } from "../../src/runner/job-queue.ts";
import { createTestDatabase, type TestDatabase } from "../../testkit/runner/runner-db.ts";

const silent = new Logger(() => () => undefined);

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Polls `probe` every 50 ms until it returns a value; the state it waits for holds until the test acts. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("graphile-worker's job writes on the runner's queue pool", () => {
  let db: TestDatabase;
  let admin: pg.Client;

  before(async () => {
    db = await createTestDatabase();
    admin = new pg.Client({ connectionString: postgresUrl(loadStandConfig().postgres.database) });
    await admin.connect();
  });

  after(async () => {
    await admin.end();
    await db.drop();
  });

  it("the installed graphile-worker still writes jobs with the statement names the pool sends again", () => {
    const dist = path.join(repoRoot, "node_modules/graphile-worker/dist/sql");
    const sources = ["completeJobs.js", "failJobs.js", "returnJobs.js"].map((f) => readFileSync(path.join(dist, f), "utf8")).join("\n");
    for (const name of JOB_WRITE_STATEMENTS) assert.ok(sources.includes(`\`${name}/`), `graphile-worker names a statement '${name}/<schema>' (an upgrade renamed it: update JOB_WRITE_STATEMENTS)`);
  });

  for (const outcome of ["fails", "succeeds"] as const) {
    it(`a job that ${outcome} while Postgres terminates the connection writing it: the write lands on a new connection and nothing is left rejected`, async () => {
      const retried: string[] = [];
      const retriedOnce = deferred();
      const pool = createPatientPool(db.url, 4, {
        patienceMs: 30_000,
        onRetry: () => undefined,
        onJobWriteRetry: (_err, statement) => {
          retried.push(statement);
          retriedOnce.resolve();
        },
      });
      pool.on("error", () => undefined); // an idle connection a terminate reached
      pool.on("connect", (client) => client.on("error", () => undefined));
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on("unhandledRejection", onUnhandled);
      const started = deferred();
      const proceed = deferred();
      const locker = new pg.Client({ connectionString: db.url });
      await locker.connect();
      const worker = await runGraphile({
        pgPool: pool,
        concurrency: 2,
        noHandleSignals: true,
        pollInterval: 200,
        logger: silent,
        preset: { worker: graphileWorkerPreset(2) },
        taskList: {
          probe: async () => {
            started.resolve();
            await proceed.promise;
            if (outcome === "fails") throw new Error("probe failed on purpose");
          },
        },
      });
      try {
        const job = await worker.addJob("probe", {}, { maxAttempts: 3 });
        await started.promise;
        // the job runs: hold its row, so the write that marks it done or failed waits for the lock
        await locker.query("begin");
        await locker.query("select id from graphile_worker._private_jobs where id = $1 for update", [job.id]);
        proceed.resolve();
        const blocked = await until("the job write waiting for the row lock", async () => {
          const { rows } = await admin.query<{ pid: number; query: string }>(
            "select pid, query from pg_stat_activity where datname = $1 and application_name = 'dag-runner-queue' and wait_event_type = 'Lock'",
            [db.name],
          );
          return rows[0];
        });
        assert.match(blocked.query, /_private_jobs/, "the blocked statement is graphile's job write");
        // what a Postgres restart does to every backend: FATAL 57P01 under the running statement
        await admin.query("select pg_terminate_backend($1)", [blocked.pid]);
        await retriedOnce.promise;
        await locker.query("rollback");
        if (outcome === "fails") {
          const row = await until("the job marked failed", async () => {
            const { rows } = await locker.query<{ last_error: string | null; locked_by: string | null; attempts: number }>(
              "select last_error, locked_by, attempts from graphile_worker._private_jobs where id = $1",
              [job.id],
            );
            return rows[0]?.last_error ? rows[0] : undefined;
          });
          assert.equal(row.last_error, "probe failed on purpose");
          assert.equal(row.locked_by, null, "the failed job was unlocked for its next attempt");
          assert.equal(row.attempts, 1);
        } else {
          await until("the job deleted as complete", async () => {
            const { rows } = await locker.query("select 1 from graphile_worker._private_jobs where id = $1", [job.id]);
            return rows.length === 0 ? true : undefined;
          });
        }
        assert.ok(retried.length >= 1 && retried.every((s) => s.startsWith(outcome === "fails" ? "fail_job" : "complete_job")), `the pool sent the job write again: ${retried.join(", ")}`);
        assert.deepEqual(unhandled, [], "no job write was left rejected with nobody awaiting it");
      } finally {
        proceed.resolve();
        await locker.query("rollback").catch(() => undefined);
        await locker.end();
        await worker.stop();
        await pool.end();
        process.off("unhandledRejection", onUnhandled);
      }
    });
  }
});
