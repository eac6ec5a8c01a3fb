// Operator controls (000009_operator_controls.sql, src/runner/operator.ts): a run stuck in a long
// wait is marked failed (its try stopped, a late result refused, its resource freed, its child runs
// ended with it); a failed run's failed task and its downstream are cleared and run again in the same
// run, keeping every try's history; a dry run changes nothing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { UnknownTaskIdsError } from "../../src/runner/errors.ts";
import { Gate, useTestRunner, waitForTaskState, waitUntil } from "../../testkit/runner/runner-db.ts";

let stuckGate = new Gate();
let lateResultReturned = new Gate();
let flakyFailuresLeft = 0;
const extractRuns: string[] = [];

const dags = [
  defineDag({ id: "stuck", exclusive: ["res"] })
    .task("long_wait", async () => {
      await stuckGate.opened; // ignores its signal, like a task blocked in a client call
      lateResultReturned.open();
    })
    .task("after", { upstream: ["long_wait"] }, () => undefined)
    .build(),
  defineDag({ id: "contender", exclusive: ["res"] })
    .task("work", () => undefined)
    .build(),
  defineDag({ id: "parent_of_stuck", exclusive: ["res"] })
    .waitingTrigger("call", { triggerDagId: "stuck" })
    .build(),
  defineDag({ id: "pipeline" })
    .task("extract", (ctx) => {
      extractRuns.push(ctx.runId);
    })
    .task("load", { upstream: ["extract"] }, () => {
      if (flakyFailuresLeft > 0) {
        flakyFailuresLeft -= 1;
        throw new Error("transient trouble");
      }
    })
    .task("report", { upstream: ["load"] }, () => undefined)
    .task("side", { upstream: ["extract"] }, () => undefined)
    .build(),
];

describe("operator controls", () => {
  const engine = useTestRunner(dags, { concurrency: 4, beforeStop: () => stuckGate.open() });

  it("a run stuck in a wait is marked failed: the try stops, its late result is refused, the resource is freed", async () => {
    stuckGate = new Gate();
    lateResultReturned = new Gate();
    const { runner } = engine;
    const stuck = await runner.triggerRun("stuck", { triggeredBy: "test" });
    await waitForTaskState(runner, "stuck", stuck.runId, "long_wait", "running");
    const contender = await runner.triggerRun("contender", { triggeredBy: "test" });
    await waitUntil("the contender to wait", async () => (await runner.getRun("contender", contender.runId)).waitingFor !== null);

    const marked = await runner.patchRun("stuck", stuck.runId, { state: "failed" }, { by: "test" });
    assert.equal(marked.state, "failed");
    assert.match(marked.note ?? "", /run marked failed by test/);
    const tis = new Map((await runner.listTaskInstances("stuck", stuck.runId)).map((ti) => [ti.taskId, ti]));
    assert.equal(tis.get("long_wait")?.state, "failed");
    assert.equal(tis.get("after")?.state, "upstream_failed");
    // the world is free: the contender runs now
    assert.equal((await runner.waitForRun("contender", contender.runId, { timeoutMs: 10_000 })).state, "success");

    // the stuck task finally returns: its result is refused and the history says so
    stuckGate.open();
    await lateResultReturned.opened;
    const log = await waitUntil("the late result to be refused", async () => {
      const l = await runner.getTaskLog("stuck", stuck.runId, "long_wait", 1);
      return l.lines.some((line) => /late success result refused/.test(line.message)) ? l : undefined;
    });
    assert.ok(log.lines.some((line) => /run marked failed by test/.test(line.message)));
    assert.equal((await runner.getRun("stuck", stuck.runId)).state, "failed");
    assert.equal((await runner.listTaskInstances("stuck", stuck.runId)).find((t) => t.taskId === "long_wait")?.state, "failed");
  });

  it("marking a parent failed ends its open child run too, deepest first", async () => {
    stuckGate = new Gate();
    const { runner } = engine;
    const parent = await runner.triggerRun("parent_of_stuck", { triggeredBy: "test" });
    const child = await waitUntil("the child run", async () => {
      const page = await runner.listRuns("stuck", { limit: 5, offset: 0, order: "desc" });
      return page.items.find((r) => r.parentRunId === parent.runId && r.state === "running");
    });
    await runner.patchRun("parent_of_stuck", parent.runId, { state: "failed" }, { by: "test" });
    assert.equal((await runner.getRun("stuck", child.runId)).state, "failed");
    assert.equal((await runner.getRun("parent_of_stuck", parent.runId)).state, "failed");
    stuckGate.open();
  });

  it("clearing a failed task reruns it and its downstream in the same run; every try stays in the history", async () => {
    const { runner } = engine;
    flakyFailuresLeft = 1;
    extractRuns.length = 0;
    const run = await runner.triggerRun("pipeline", { triggeredBy: "test" });
    const failed = await runner.waitForRun("pipeline", run.runId, { timeoutMs: 10_000 });
    assert.equal(failed.state, "failed");
    const before = new Map((await runner.listTaskInstances("pipeline", run.runId)).map((ti) => [ti.taskId, ti]));
    assert.equal(before.get("load")?.state, "failed");
    assert.equal(before.get("report")?.state, "upstream_failed");

    const request = { runId: run.runId, taskIds: null, onlyFailed: true, includeDownstream: true, includeUpstream: false, by: "test" };
    const dry = await runner.clearTaskInstances("pipeline", { ...request, dryRun: true });
    const selected = dry.map((ti) => ti.taskId).sort();
    assert.ok(selected.includes("load") && selected.includes("report") && !selected.includes("extract"), selected.join(","));
    assert.equal((await runner.getRun("pipeline", run.runId)).state, "failed", "a dry run changes nothing");

    await runner.clearTaskInstances("pipeline", { ...request, dryRun: false });
    const done = await runner.waitForRun("pipeline", run.runId, { timeoutMs: 10_000 });
    assert.equal(done.state, "success");
    const after = new Map((await runner.listTaskInstances("pipeline", run.runId)).map((ti) => [ti.taskId, ti]));
    assert.equal(after.get("load")?.tryNumber, 2, "the cleared task ran as try 2");
    assert.equal(after.get("extract")?.tryNumber, 1, "a successful task was not run again");
    assert.deepEqual(extractRuns, [run.runId]);
    assert.equal(after.get("report")?.state, "success");
    assert.equal(after.get("side")?.state, "success");
    const firstTry = await runner.getTaskLog("pipeline", run.runId, "load", 1);
    assert.ok(firstTry.lines.some((l) => /transient trouble/.test(l.message)), "try 1's failure is kept");
    assert.ok(firstTry.lines.some((l) => /cleared by test/.test(l.message)));
  });

  it("marking a failed run success, and back; an unknown task id is refused", async () => {
    const { runner } = engine;
    flakyFailuresLeft = 1;
    const run = await runner.triggerRun("pipeline", { triggeredBy: "test" });
    assert.equal((await runner.waitForRun("pipeline", run.runId, { timeoutMs: 10_000 })).state, "failed");
    assert.equal((await runner.patchRun("pipeline", run.runId, { state: "success" }, { by: "test" })).state, "success");
    assert.ok((await runner.listTaskInstances("pipeline", run.runId)).every((ti) => ti.state === "success"));
    assert.equal((await runner.patchRun("pipeline", run.runId, { state: "failed", note: "checked by hand" }, { by: "test" })).note, "checked by hand");
    await assert.rejects(
      runner.clearTaskInstances("pipeline", { runId: run.runId, taskIds: ["nope"], onlyFailed: false, includeDownstream: false, includeUpstream: false, dryRun: true, by: "test" }),
      UnknownTaskIdsError,
    );
  });
});
