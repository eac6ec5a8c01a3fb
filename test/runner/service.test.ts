// The RunnerService contract the REST API relies on: DAG summaries and pause, triggering with
// conf validation and duplicate ids, reads with their not-found errors, waitForRun woken by
// NOTIFY (not polling), health, metrics, and scheduled DAGs.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { defineDag } from "../../src/runner/dag.ts";
import {
  ConfValidationError,
  DagNotFoundError,
  DagRunNotFoundError,
  DuplicateRunError,
  TaskInstanceNotFoundError,
  TryNotFoundError,
} from "../../src/runner/errors.ts";
import { Gate, sleep, triggerAndWait, useTestRunner, withClient } from "../../testkit/runner/runner-db.ts";

let hold = new Gate();

const dags = [
  defineDag({
    id: "typed_conf",
    description: "needs a date range",
    params: z.object({ from: z.string().regex(/^\d{4}-\d{2}-\d{2}$/), days: z.number().int().positive().default(1) }),
  })
    .task("echo", (ctx) => ctx.log.info(JSON.stringify(ctx.conf)))
    .build(),
  defineDag({ id: "held" }).task("wait", async () => void (await hold.opened)).build(),
  defineDag({ id: "ticking", schedule: { everySeconds: 1 }, isPausedUponCreation: true }).task("tick", () => undefined).build(),
];

describe("runner service", () => {
  const engine = useTestRunner(dags, { schedulerIntervalMs: 200, beforeStop: () => hold.open() });

  it("lists DAGs with their summary; unknown ids are DagNotFoundError", async () => {
    const list = await engine.runner.listDags();
    assert.deepEqual(list.map((d) => d.dagId), ["held", "ticking", "typed_conf"]);
    const typed = await engine.runner.getDag("typed_conf");
    assert.deepEqual([typed.description, typed.schedule, typed.isPaused, typed.maxActiveRuns, typed.taskIds], [
      "needs a date range",
      null,
      false,
      1,
      ["echo"],
    ]);
    assert.deepEqual((typed.paramsJsonSchema as { required?: string[] }).required, ["from", "days"]);
    assert.equal((await engine.runner.getDag("ticking")).schedule, "@every 1s");
    await assert.rejects(engine.runner.getDag("nope"), DagNotFoundError);
    await assert.rejects(engine.runner.triggerRun("nope", { triggeredBy: "t" }), DagNotFoundError);
    await assert.rejects(engine.runner.setPaused("nope", true), DagNotFoundError);
  });

  it("validates conf at trigger time, naming the field; applies defaults", async () => {
    await assert.rejects(engine.runner.triggerRun("typed_conf", { conf: { from: "yesterday" }, triggeredBy: "t" }), (err: unknown) => {
      assert.ok(err instanceof ConfValidationError);
      assert.equal(err.field, "from");
      return true;
    });
    assert.equal((await engine.runner.listRuns("typed_conf", { limit: 10, offset: 0 })).totalEntries, 0, "a refused trigger creates nothing");
    const run = await triggerAndWait(engine.runner, "typed_conf", { from: "2026-01-01" });
    assert.deepEqual(run.conf, { from: "2026-01-01", days: 1 });
    assert.equal(run.triggeredBy, "test");
    assert.equal(run.runType, "manual");
    const log = await engine.runner.getTaskLog("typed_conf", run.runId, "echo", 1);
    assert.deepEqual(log.lines.map((l) => JSON.parse(l.message) as unknown), [{ from: "2026-01-01", days: 1 }]);
  });

  it("takes a caller's run id once; a second trigger with it is DuplicateRunError", async () => {
    const run = await engine.runner.triggerRun("typed_conf", {
      runId: "my_run",
      conf: { from: "2026-01-02" },
      note: "by hand",
      logicalDate: new Date("2026-01-02T00:00:00Z"),
      triggeredBy: "api:alice",
    });
    assert.deepEqual([run.runId, run.note, run.logicalDate?.toISOString()], ["my_run", "by hand", "2026-01-02T00:00:00.000Z"]);
    await assert.rejects(engine.runner.triggerRun("typed_conf", { runId: "my_run", conf: { from: "2026-01-02" }, triggeredBy: "t" }), DuplicateRunError);
  });

  it("pages runs, filters by state, and raises the not-found errors", async () => {
    await engine.runner.waitForRun("typed_conf", "my_run", { timeoutMs: 10_000 });
    const all = await engine.runner.listRuns("typed_conf", { limit: 1, offset: 0 });
    assert.equal(all.totalEntries, 2);
    assert.equal(all.items[0]?.runId, "my_run", "newest first by default");
    const oldest = await engine.runner.listRuns("typed_conf", { limit: 1, offset: 0, order: "asc" });
    assert.notEqual(oldest.items[0]?.runId, "my_run");
    assert.equal((await engine.runner.listRuns("typed_conf", { limit: 10, offset: 0, state: "failed" })).totalEntries, 0);
    assert.deepEqual((await engine.runner.listRuns("typed_conf", { limit: 10, offset: 5 })).items, []);
    await assert.rejects(engine.runner.getRun("typed_conf", "missing"), DagRunNotFoundError);
    await assert.rejects(engine.runner.listTaskInstances("typed_conf", "missing"), DagRunNotFoundError);
    await assert.rejects(engine.runner.getTaskLog("typed_conf", "missing", "echo", 1), DagRunNotFoundError);
    await assert.rejects(engine.runner.getTaskLog("typed_conf", "my_run", "nope", 1), TaskInstanceNotFoundError);
    await assert.rejects(engine.runner.getTaskLog("typed_conf", "my_run", "echo", 2), TryNotFoundError);
    await assert.rejects(engine.runner.getTaskLog("typed_conf", "my_run", "echo", 0), TryNotFoundError);
  });

  it("waitForRun is woken by the completion NOTIFY, not by polling", async () => {
    const WAKE_TIMEOUT_MS = 30_000;
    hold = new Gate();
    const run = await engine.runner.triggerRun("held", { triggeredBy: "t" });
    // a change made behind the engine's back sends no NOTIFY: a waiter must sleep through it
    // (a polling waiter would see it), and returns the run as it is when its timeout ends
    await withClient(engine.db, (c) => c.query("update runner.dag_runs set note = 'touched' where run_id = $1", [run.runId]));
    const t0 = performance.now();
    const timedOut = await engine.runner.waitForRun("held", run.runId, { timeoutMs: 400 });
    assert.equal(timedOut.state, "running");
    assert.ok(performance.now() - t0 >= 390);

    const aborter = new AbortController();
    setTimeout(() => aborter.abort(), 100);
    const aborted = await engine.runner.waitForRun("held", run.runId, { timeoutMs: 10_000, signal: aborter.signal });
    assert.equal(aborted.state, "running");

    // woken, not timed out: with no polling, a waiter that missed the completion's NOTIFY returns
    // only when its timeout ends, so returning before it is the proof (a latency bound here was red
    // at 300 ms on a loaded machine; how fast a wake is belongs to make bench)
    const waiting = engine.runner.waitForRun("held", run.runId, { timeoutMs: WAKE_TIMEOUT_MS });
    await sleep(200);
    const opened = performance.now();
    hold.open();
    const done = await waiting;
    assert.equal(done.state, "success");
    assert.ok(performance.now() - opened < WAKE_TIMEOUT_MS, `woken by the completion's NOTIFY, not by the ${WAKE_TIMEOUT_MS} ms timeout`);

    // a run ended by the engine's SQL from another connection (which notifies) wakes at once
    hold = new Gate();
    const second = await engine.runner.triggerRun("held", { triggeredBy: "t" });
    const secondWait = engine.runner.waitForRun("held", second.runId, { timeoutMs: WAKE_TIMEOUT_MS });
    await sleep(200);
    const t1 = performance.now();
    await withClient(engine.db, (c) =>
      c.query("select runner.complete_run(id, 'failed') from runner.dag_runs where run_id = $1", [second.runId]),
    );
    assert.equal((await secondWait).state, "failed");
    assert.ok(performance.now() - t1 < WAKE_TIMEOUT_MS, `woken by the NOTIFY of complete_run from another connection, not by the ${WAKE_TIMEOUT_MS} ms timeout`);
    hold.open();
  });

  it("reports health from the heartbeat and serves metrics", async () => {
    const health = await engine.runner.health();
    assert.equal(health.metadatabase, "healthy");
    assert.equal(health.scheduler, "healthy");
    assert.ok(health.latestHeartbeat && Date.now() - health.latestHeartbeat.getTime() < 10_000);
    const text = await engine.runner.metrics.metrics();
    assert.match(text, /runner_dag_runs\{state="success"\} [1-9]/);
    assert.match(text, /runner_task_duration_seconds_count\{dag_id="typed_conf",state="success"\} [1-9]/);
    assert.match(text, /runner_task_handoff_seconds_count [1-9]/);
  });

  it("a scheduled DAG creates runs only while unpaused, one per due instant", async () => {
    assert.equal((await engine.runner.listRuns("ticking", { limit: 10, offset: 0 })).totalEntries, 0, "created paused: no runs");
    await engine.runner.setPaused("ticking", false);
    await sleep(2_300);
    await engine.runner.setPaused("ticking", true);
    const runs = await engine.runner.listRuns("ticking", { limit: 100, offset: 0, order: "asc" });
    assert.ok(runs.totalEntries >= 2 && runs.totalEntries <= 4, `${runs.totalEntries} runs in 2.3 s of a 1 s schedule`);
    for (const r of runs.items) {
      assert.equal(r.runType, "scheduled");
      assert.equal(r.runId, `scheduled__${r.logicalDate?.toISOString()}`);
    }
    await sleep(1_500);
    assert.equal((await engine.runner.listRuns("ticking", { limit: 100, offset: 0 })).totalEntries, runs.totalEntries, "paused: no new runs");
  });
});
