// Retries with exponential backoff (each retry scheduled at its delay, and never started before it), non-retryable failures, and the
// execution timeout: a task's signal aborts at the deadline, and a task that ignores it is still
// failed then.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { NonRetryableError } from "../../src/runner/errors.ts";
import { type TestDatabase, sleep, triggerAndWait, useTestRunner, withClient } from "../../testkit/runner/runner-db.ts";
import { coerceError } from "../../src/errors.ts";

/** Per run, what each retry saw of itself when it started: the delay it was scheduled at (its
 * queued_at after the previous try's end) and how late its start was against that schedule. */
const retrySchedules = new Map<string, { scheduledMs: number; lateMs: number }[]>();
let runnerDb: TestDatabase | undefined;
const signalSeen = new Map<string, unknown>();
let ignoringTaskFinished = false;

const dags = [
  defineDag({ id: "backoff" })
    .task("always_fails", { retries: 3, retryDelayMs: 200, maxRetryDelayMs: 500 }, async (ctx) => {
      if (ctx.tryNumber > 1 && runnerDb) {
        const { rows } = await withClient(runnerDb, (c) =>
          c.query<{ scheduled_ms: number; late_ms: number }>(
            `select extract(epoch from ti.queued_at - prev.end_date)::float8 * 1000 as scheduled_ms,
                    extract(epoch from ti.start_date - ti.queued_at)::float8 * 1000 as late_ms
               from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk
               join runner.task_tries prev on prev.ti_id = ti.id and prev.try_number = ti.try_number - 1
              where r.run_id = $1 and ti.task_id = 'always_fails'`,
            [ctx.runId],
          ),
        );
        const seen = retrySchedules.get(ctx.runId) ?? [];
        seen.push(...rows.map((r) => ({ scheduledMs: r.scheduled_ms, lateMs: r.late_ms })));
        retrySchedules.set(ctx.runId, seen);
      }
      throw new Error(`try ${ctx.tryNumber} failed`);
    })
    .build(),
  defineDag({ id: "hopeless" })
    .task("refuses", { retries: 5, retryDelayMs: 50 }, () => {
      throw new NonRetryableError("no point retrying");
    })
    .build(),
  defineDag({ id: "polite_timeout" })
    .task("honours_signal", { executionTimeoutMs: 300 }, async (ctx) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 5_000);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          signalSeen.set(ctx.runId, ctx.signal.reason);
          reject(coerceError(ctx.signal.reason));
        });
      });
    })
    .build(),
  defineDag({ id: "rude_timeout" })
    .task("ignores_signal", { executionTimeoutMs: 300 }, async () => {
      await sleep(1_500); // never looks at its signal
      ignoringTaskFinished = true;
    })
    .build(),
];

async function tryRows(db: TestDatabase, runId: string) {
  return withClient(db, async (c) => {
    const { rows } = await c.query<{ try_number: number; state: string; ms: number; error: string }>(
      `select tt.try_number, tt.state, extract(epoch from tt.end_date - tt.start_date)::float8 * 1000 as ms, tt.error
         from runner.task_tries tt join runner.task_instances ti on ti.id = tt.ti_id
         join runner.dag_runs r on r.id = ti.run_pk where r.run_id = $1 order by tt.try_number`,
      [runId],
    );
    return rows;
  });
}

describe("retries and timeouts", () => {
  const engine = useTestRunner(dags, { concurrency: 4 });
  before(() => {
    runnerDb = engine.db;
  });

  it("retries with doubling delays up to the cap, then fails the run", async () => {
    const run = await triggerAndWait(engine.runner, "backoff");
    assert.equal(run.state, "failed");
    // 200, 400, then 800 capped at 500 (each + up to 25 % jitter): the delay each retry was scheduled at, as the runner wrote
    // it (queued_at after the previous try's end, one statement), and its start never before it. How
    // late a start is depends on the machine's load, not on the rule, so it is only shown to be >= 0;
    // the rule itself is tested on fake time (test/runner/error-policy.test.ts, dag-builder.test.ts).
    const schedules = retrySchedules.get(run.runId) ?? [];
    assert.equal(schedules.length, 3, "3 retries, each seen at its start");
    const levels = [200, 400, 500];
    schedules.forEach(({ scheduledMs, lateMs }, i) => {
      const want = levels[i] ?? 0;
      // the rule adds up to 25 % jitter (src/runner/dag.ts, retryDelayMs)
      assert.ok(scheduledMs >= want - 1 && scheduledMs <= want * 1.25 + 1, `retry ${i + 1} was scheduled ${scheduledMs.toFixed(1)} ms after try ${i + 1} ended: not the backoff's ${want} ms (+ up to 25 % jitter)`);
      assert.ok(lateMs >= 0, `retry ${i + 1} started ${(-lateMs).toFixed(1)} ms before its scheduled time`);
    });
    const tries = await tryRows(engine.db, run.runId);
    assert.deepEqual(tries.map((t) => [t.try_number, t.state]), [[1, "failed"], [2, "failed"], [3, "failed"], [4, "failed"]]);
    assert.equal(tries[3]?.error, "try 4 failed");
    const [ti] = await engine.runner.listTaskInstances("backoff", run.runId);
    assert.deepEqual([ti?.state, ti?.tryNumber, ti?.maxTries], ["failed", 4, 4]);
  });

  it("a NonRetryableError fails at once, leaving its retries unused", async () => {
    const run = await triggerAndWait(engine.runner, "hopeless");
    assert.equal(run.state, "failed");
    const [ti] = await engine.runner.listTaskInstances("hopeless", run.runId);
    assert.deepEqual([ti?.state, ti?.tryNumber, ti?.error], ["failed", 1, "NonRetryableError: no point retrying"]);
  });

  it("the execution timeout aborts the task's signal at the deadline and fails the try", async () => {
    const run = await triggerAndWait(engine.runner, "polite_timeout");
    assert.equal(run.state, "failed");
    const reason = signalSeen.get(run.runId);
    assert.ok(reason instanceof Error && reason.name === "TaskTimeoutError", `signal reason: ${String(reason)}`);
    const [attempt] = await tryRows(engine.db, run.runId);
    assert.equal(attempt?.state, "failed");
    assert.match(attempt?.error ?? "", /execution timeout of 300 ms exceeded/);
    assert.ok((attempt?.ms ?? 0) >= 290 && (attempt?.ms ?? 0) < 800, `try lasted ${attempt?.ms} ms`);
  });

  it("a task that ignores its signal is still failed at the deadline", async () => {
    const t0 = performance.now();
    const run = await triggerAndWait(engine.runner, "rude_timeout");
    const elapsed = performance.now() - t0;
    assert.equal(run.state, "failed");
    assert.equal(ignoringTaskFinished, false, "the run ended before the task's own code did");
    assert.ok(elapsed < 1_200, `the run took ${elapsed.toFixed(0)} ms; the deadline was 300 ms`);
    const [attempt] = await tryRows(engine.db, run.runId);
    assert.ok((attempt?.ms ?? 0) >= 290 && (attempt?.ms ?? 0) < 800, `try lasted ${attempt?.ms} ms`);
    assert.match(attempt?.error ?? "", /TaskTimeoutError/);
  });
});
