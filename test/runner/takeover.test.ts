// Crash takeover: a worker process is SIGKILLed mid-task; another runner takes the task over
// within the lease plus a few seconds (not graphile's 4 hours), graphile's lock on the dead job
// is cleared, and a late result presented with the dead try's token is refused.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createPool } from "../../src/runner/db.ts";
import type { Runner } from "../../src/runner/runner.ts";
import { recordTaskResult } from "../../src/runner/task-tries.ts";
import { takeoverDag } from "./fixtures/takeover-dag.ts";
import { type TestDatabase, createTestDatabase, startRunner, waitUntil, withClient } from "../../testkit/runner/runner-db.ts";

const LEASE_SECONDS = 3;
const here = path.dirname(fileURLToPath(import.meta.url));

/** Starts the doomed worker and resolves with its run id once its task is running. */
function spawnDoomedWorker(db: TestDatabase): Promise<{ child: ChildProcess; runId: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(here, "fixtures/takeover-worker.ts"), db.name, String(LEASE_SECONDS)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the worker process did not start its task in 30 s")), 30_000);
    child.once("exit", (code) => reject(new Error(`the worker process exited early (${code})`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const started = /^STARTED (.+)$/.exec(line);
      if (started?.[1]) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve({ child, runId: started[1] });
      }
    });
  });
}

interface TryRow {
  id: number;
  state: string;
  try_number: number;
  attempt_token: string;
  worker: string;
  job_id: number;
  start_date: Date;
}

async function taskInstance(db: TestDatabase, runId: string): Promise<TryRow> {
  return withClient(db, async (c) => {
    const { rows } = await c.query<TryRow>(
      `select ti.id, ti.state, ti.try_number, ti.attempt_token, ti.worker, ti.job_id, ti.start_date
         from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk where r.run_id = $1`,
      [runId],
    );
    assert.ok(rows[0]);
    return rows[0];
  });
}

describe("crash takeover", () => {
  let db: TestDatabase;
  let runner: Runner | undefined;
  let child: ChildProcess | undefined;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    child?.kill("SIGKILL");
    await runner?.stop();
    await db.drop();
  });

  it("a SIGKILLed worker's task is taken over within the lease, and its late result is refused", async (t) => {
    const doomed = await spawnDoomedWorker(db);
    child = doomed.child;
    const first = await taskInstance(db, doomed.runId);
    assert.equal(first.state, "running");
    assert.equal(first.try_number, 1);
    assert.match(first.worker, /^doomed-worker-/);

    const exited = new Promise((resolve) => doomed.child.once("exit", resolve));
    doomed.child.kill("SIGKILL");
    await exited;
    const killedAt = Date.now();

    runner = await startRunner(db, [takeoverDag], { leaseSeconds: LEASE_SECONDS });
    const done = await runner.waitForRun("takeover", doomed.runId, { timeoutMs: (LEASE_SECONDS + 10) * 1000 });
    assert.equal(done.state, "success");
    const second = await taskInstance(db, doomed.runId);
    assert.equal(second.try_number, 2);
    assert.notEqual(second.worker, first.worker);
    const takeoverMs = second.start_date.getTime() - killedAt;
    assert.ok(takeoverMs <= (LEASE_SECONDS + 3) * 1000, `taken over ${takeoverMs} ms after the kill; lease is ${LEASE_SECONDS} s`);
    t.diagnostic(`try 2 started ${takeoverMs} ms after the kill (lease ${LEASE_SECONDS} s)`);

    await withClient(db, async (c) => {
      const lost = await c.query<{ state: string; error: string }>("select state, error from runner.task_tries where ti_id = $1 and try_number = 1", [first.id]);
      assert.equal(lost.rows[0]?.state, "lost");
      assert.match(String(lost.rows[0]?.error), /doomed-worker-\d+ stopped renewing its lease/);
      // graphile's lock on the dead job is gone: the job itself was removed with the takeover
      const job = await c.query("select id, locked_by from graphile_worker._private_jobs where id = $1", [first.job_id]);
      assert.deepEqual(job.rows, []);
      const stale = await c.query<{ n: number }>("select count(*)::int as n from graphile_worker._private_jobs where locked_at is not null");
      assert.equal(stale.rows[0]?.n, 0);
    });

    // the dead worker's result arrives late, with its old token: refused, and said so in its log
    const pool = createPool(db.url, 1);
    try {
      const late = await recordTaskResult(pool, first.id, first.attempt_token, {
        outcome: "success",
        error: null,
        retryable: false,
        retryDelayMs: 0,
        skip: [],
        log: [{ at: new Date(), level: "info", message: "the zombie finished after all" }],
      });
      assert.equal(late.accepted, false);
    } finally {
      await pool.end();
    }
    const after = await taskInstance(db, doomed.runId);
    assert.deepEqual([after.state, after.try_number, after.attempt_token], ["success", 2, second.attempt_token]);
    const log = await runner.getTaskLog("takeover", doomed.runId, "long", 1);
    assert.ok(log.lines.some((l) => l.message === "late success result refused: try 1 no longer holds the task"));
    assert.ok(log.lines.some((l) => l.message === "the zombie finished after all"));
    const retryLog = await runner.getTaskLog("takeover", doomed.runId, "long", 2);
    assert.deepEqual(retryLog.lines.map((l) => l.message), ["try 2 took over and finished"]);
    await waitUntil("the run to stay success", async () => (await runner?.getRun("takeover", doomed.runId))?.state === "success");
  });
});
