// max_active_runs and pause: 20 concurrent triggers of a max_active_runs=1 DAG never overlap and
// finish in trigger order; pausing stops new runs from starting (queued ones wait) while a
// running one finishes; unpausing starts the queued ones in order.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { Gate, sleep, useTestRunner, waitUntil } from "../../testkit/runner/runner-db.ts";

const intervals: { runId: string; start: number; end: number }[] = [];
let pauseGate = new Gate();

const dags = [
  defineDag({ id: "one_at_a_time", maxActiveRuns: 1 })
    .task("first", async (ctx) => {
      intervals.push({ runId: ctx.runId, start: performance.now(), end: Number.NaN });
      await sleep(15);
    })
    .task("second", { upstream: ["first"] }, async (ctx) => {
      await sleep(15);
      const mine = intervals.find((i) => i.runId === ctx.runId);
      if (mine) mine.end = performance.now();
    })
    .build(),
  defineDag({ id: "pausable", maxActiveRuns: 1 })
    .task("work", async () => {
      await pauseGate.opened;
    })
    .build(),
];

describe("max_active_runs and pause", () => {
  const engine = useTestRunner(dags, { concurrency: 8, beforeStop: () => pauseGate.open() });

  it("20 concurrent triggers never overlap and finish in trigger order", async () => {
    const triggered = await Promise.all(
      Array.from({ length: 20 }, () => engine.runner.triggerRun("one_at_a_time", { triggeredBy: "test" })),
    );
    const finished = await Promise.all(triggered.map((r) => engine.runner.waitForRun("one_at_a_time", r.runId, { timeoutMs: 30_000 })));
    assert.ok(finished.every((r) => r.state === "success"));
    // trigger order is the insert sequence (000006_trigger_order.sql): the listing, the API's
    // order_by and the scheduler all sort by it, and queued_at follows it within a DAG
    const page = await engine.runner.listRuns("one_at_a_time", { limit: 100, offset: 0, order: "asc" });
    const byTrigger = page.items.map((r) => r.runId);
    assert.equal(byTrigger.length, 20);
    for (let i = 1; i < page.items.length; i++) {
      const prev = page.items[i - 1];
      const next = page.items[i];
      assert.ok(prev && next && next.queuedAt >= prev.queuedAt, `run ${i} was queued before run ${i - 1} in the listing`);
    }
    const byStart = [...finished].sort((a, b) => (a.startDate?.getTime() ?? 0) - (b.startDate?.getTime() ?? 0)).map((r) => r.runId);
    const byEnd = [...finished].sort((a, b) => (a.endDate?.getTime() ?? 0) - (b.endDate?.getTime() ?? 0)).map((r) => r.runId);
    assert.deepEqual(byStart, byTrigger, "runs started in trigger order");
    assert.deepEqual(byEnd, byTrigger, "runs finished in trigger order");
    // the runs' own database intervals do not overlap...
    for (let i = 1; i < page.items.length; i++) {
      const prev = page.items[i - 1];
      const next = page.items[i];
      assert.ok(prev?.endDate && next?.startDate && next.startDate >= prev.endDate, `run ${i} started before run ${i - 1} ended`);
    }
    // ...and neither do the intervals the tasks themselves observed
    const observed = byTrigger.map((runId) => intervals.find((i) => i.runId === runId));
    for (let i = 1; i < observed.length; i++) {
      const prev = observed[i - 1];
      const next = observed[i];
      assert.ok(prev && next && next.start >= prev.end, `tasks of run ${i} began before run ${i - 1}'s ended`);
    }
  });

  it("pause stops new runs from starting; the running one finishes; unpause starts the queued in order", async () => {
    pauseGate = new Gate();
    const running = await engine.runner.triggerRun("pausable", { triggeredBy: "test" });
    await waitUntil("the first run to start", async () => (await engine.runner.getRun("pausable", running.runId)).state === "running");
    const paused = await engine.runner.setPaused("pausable", true);
    assert.equal(paused.isPaused, true);
    const waiting = [
      await engine.runner.triggerRun("pausable", { triggeredBy: "test" }),
      await engine.runner.triggerRun("pausable", { triggeredBy: "test" }),
    ];
    pauseGate.open();
    assert.equal((await engine.runner.waitForRun("pausable", running.runId, { timeoutMs: 10_000 })).state, "success");
    await sleep(300);
    for (const run of waiting) assert.equal((await engine.runner.getRun("pausable", run.runId)).state, "queued");
    assert.equal((await engine.runner.getDag("pausable")).isPaused, true);

    await engine.runner.setPaused("pausable", false);
    const done = await Promise.all(waiting.map((r) => engine.runner.waitForRun("pausable", r.runId, { timeoutMs: 10_000 })));
    assert.deepEqual(done.map((r) => r.state), ["success", "success"]);
    assert.ok((done[1]?.startDate?.getTime() ?? 0) >= (done[0]?.endDate?.getTime() ?? Infinity));
  });
});
