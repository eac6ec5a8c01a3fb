// graphile-worker shuts its worker pool down by itself when a job write fails for good; the
// runner process lives on, and before the job queue had a keeper no job ran again until someone
// restarted the runner (a step-fault run: "Runner stopping (reason: worker pool exited with error)").
// The test makes graphile's pool die by construction: it holds the finished job's row, so
// graphile's completion write blocks on the lock, then cancels that statement (an error that is
// no connection loss, so nothing sends it again); graphile declares its queue inconsistent and
// shuts the pool down. The runner must start graphile again, unlock the dead pool's job, and run
// the next DAG run.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import type { Registry } from "prom-client";
import { loadStandConfig, postgresUrl } from "../../src/config/stand.ts";
import { defineDag } from "../../src/runner/dag.ts";
import { Gate, triggerAndWait, useTestRunner, waitForTaskState, waitUntil, withClient } from "../../testkit/runner/runner-db.ts";

const gate = new Gate();
const dags = [
  defineDag({ id: "held" })
    .task("gated", async () => {
      await gate.opened;
    })
    .build(),
  defineDag({ id: "next" })
    .task("quick", () => Promise.resolve())
    .build(),
];

async function restartsCounted(metrics: Registry): Promise<number> {
  const metric = await metrics.getSingleMetric("runner_job_queue_restarts_total")?.get();
  return metric?.values[0]?.value ?? 0;
}

describe("the runner's job queue keeper", () => {
  const handle = useTestRunner(dags, { concurrency: 2, pollIntervalMs: 500, beforeStop: () => gate.open() });

  it("graphile's pool shuts itself down (a job write failed for good): the runner starts it again, unlocks the dead pool's job and runs the next run", async () => {
    const { runner, db } = handle;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const admin = new pg.Client({ connectionString: postgresUrl(loadStandConfig().postgres.database) });
    await admin.connect();
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      const held = await runner.triggerRun("held", { triggeredBy: "test" });
      await waitForTaskState(runner, "held", held.runId, "gated", "running");
      const jobId = await withClient(db, async (c) => (await c.query<{ job_id: string }>("select job_id from runner.task_instances where task_id = 'gated'")).rows[0]?.job_id);
      assert.ok(jobId !== undefined, "the running try records its graphile job");

      // hold the job's row: graphile's write that completes it will wait for the lock
      await locker.query("begin");
      await locker.query("select id from graphile_worker._private_jobs where id = $1 for update", [jobId]);
      gate.open();
      const done = await runner.waitForRun("held", held.runId, { timeoutMs: 10_000 });
      assert.equal(done.state, "success", "the try's result is the runner's own write, not graphile's");
      const blocked = await waitUntil("graphile's completion write waiting for the row lock", async () => {
        const { rows } = await admin.query<{ pid: number; query: string }>(
          "select pid, query from pg_stat_activity where datname = $1 and application_name = 'dag-runner-queue' and wait_event_type = 'Lock'",
          [db.name],
        );
        return rows[0];
      });
      assert.match(blocked.query, /_private_jobs/);
      // cancel it: 57014 is the statement's own failure, so graphile gives the queue up
      await admin.query("select pg_cancel_backend($1)", [blocked.pid]);
      await locker.query("rollback");

      await waitUntil("the job queue started again", async () => (await restartsCounted(runner.metrics)) >= 1, 20_000);
      const next = await triggerAndWait(runner, "next", {}, 20_000);
      assert.equal(next.state, "success", "jobs run again after graphile's pool died");
      // the dead pool's job was unlocked; its try had ended, so the new pool completes it
      await waitUntil("the dead pool's job unlocked and completed", async () =>
        withClient(db, async (c) => (await c.query("select 1 from graphile_worker._private_jobs where id = $1", [jobId])).rowCount === 0),
      );
      const tries = await withClient(db, async (c) => (await c.query<{ n: number }>("select count(*)::int as n from runner.task_tries tt join runner.task_instances ti on ti.id = tt.ti_id where ti.task_id = 'gated'")).rows[0]?.n);
      assert.equal(tries, 1, "the held task ran once");
      assert.equal(await restartsCounted(runner.metrics), 1);
      assert.deepEqual(unhandled, [], "nothing was left rejected");
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await locker.query("rollback").catch(() => undefined);
      await locker.end();
      await admin.end();
    }
  });
});
