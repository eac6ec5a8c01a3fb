// Reruns that continue where they stopped (000011_rerun_child_and_fail_points.sql): a waiting
// trigger that runs again goes back to the child run its earlier try started when that run failed,
// and only the child's failed part runs again, under the same run id; fail points fail a try before
// its function runs or after it succeeded, once per armed point, and only on a runner that honours them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";

const calls: string[] = [];
let loadFailuresLeft = 0;

const dags = [
  defineDag({ id: "child" })
    .task("pull", (ctx) => {
      calls.push(`pull:${ctx.runId}`);
    })
    .task("load", { upstream: ["pull"] }, (ctx) => {
      calls.push(`load:${ctx.runId}`);
      if (loadFailuresLeft > 0) {
        loadFailuresLeft -= 1;
        throw new Error("load refused");
      }
    })
    .build(),
  defineDag({ id: "parent" })
    .waitingTrigger("call_child", { triggerDagId: "child", retries: 1, retryDelayMs: 50 })
    .task("after", { upstream: ["call_child"] }, () => undefined)
    .build(),
  defineDag({ id: "pointed" })
    .task("first", (ctx) => {
      calls.push(`first:${ctx.runId}`);
    })
    .task("second", { upstream: ["first"] }, (ctx) => {
      calls.push(`second:${ctx.runId}`);
    })
    .build(),
];

async function armFailPoint(engine: { db: { url: string } }, dagId: string, taskId: string, phase: "before" | "after"): Promise<void> {
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: engine.db.url });
  await client.connect();
  try {
    await client.query("insert into runner.fail_points (dag_id, task_id, phase, note) values ($1, $2, $3, 'test')", [dagId, taskId, phase]);
  } finally {
    await client.end();
  }
}

describe("a waiting trigger that runs again goes back to its failed child run", () => {
  const engine = useTestRunner(dags, { failPoints: true });

  it("the trigger's retry clears the child's failed task; the child's done tasks do not run again", async () => {
    const { runner } = engine;
    calls.length = 0;
    loadFailuresLeft = 1;
    const run = await runner.triggerRun("parent", { triggeredBy: "test" });
    const done = await runner.waitForRun("parent", run.runId, { timeoutMs: 20_000 });
    assert.equal(done.state, "success");

    const children = (await runner.listRuns("child", { limit: 10, offset: 0 })).items;
    assert.equal(children.length, 1, "one child run, run twice");
    const child = children[0];
    assert.ok(child);
    assert.equal(child.state, "success");
    assert.deepEqual(calls, [`pull:${child.runId}`, `load:${child.runId}`, `load:${child.runId}`]);
    const trigger = (await runner.listTaskInstances("parent", run.runId)).find((t) => t.taskId === "call_child");
    assert.equal(trigger?.tryNumber, 2);
    const log = await runner.getTaskLog("parent", run.runId, "call_child", 2);
    assert.ok(
      log.lines.some((l) => l.message.includes(`run ${child.runId} of DAG child, started by an earlier try, runs again: 1 task(s) cleared`)),
      log.lines.map((l) => l.message).join("\n"),
    );
    const loadTries = (await runner.listTaskInstances("child", child.runId)).find((t) => t.taskId === "load");
    assert.equal(loadTries?.tryNumber, 2, "the child's failed task ran again in the same run");
  });

  it("an operator's clear of the trigger does the same; a succeeded child gives way to a new run", async () => {
    const { runner } = engine;
    calls.length = 0;
    loadFailuresLeft = 3; // more than the trigger's two tries: the parent fails
    const run = await runner.triggerRun("parent", { triggeredBy: "test" });
    assert.equal((await runner.waitForRun("parent", run.runId, { timeoutMs: 20_000 })).state, "failed");
    const [child] = (await runner.listRuns("child", { limit: 1, offset: 0 })).items;
    assert.ok(child);
    assert.equal(child.state, "failed");

    loadFailuresLeft = 0;
    await runner.clearTaskInstances("parent", { runId: run.runId, taskIds: ["call_child"], onlyFailed: true, includeDownstream: true, includeUpstream: false, dryRun: false, by: "test" });
    assert.equal((await runner.waitForRun("parent", run.runId, { timeoutMs: 20_000 })).state, "success");
    assert.equal((await runner.getRun("child", child.runId)).state, "success", "the same child run ended green");
    assert.deepEqual(calls.filter((c) => c.startsWith("pull:")), [`pull:${child.runId}`], "pull ran once, in the one child run");

    // the child succeeded: clearing the trigger again starts a new child run
    await runner.clearTaskInstances("parent", { runId: run.runId, taskIds: ["call_child"], onlyFailed: false, includeDownstream: true, includeUpstream: false, dryRun: false, by: "test" });
    assert.equal((await runner.waitForRun("parent", run.runId, { timeoutMs: 20_000 })).state, "success");
    const pulls = calls.filter((c) => c.startsWith("pull:"));
    assert.equal(pulls.length, 2);
    assert.notEqual(pulls[1], `pull:${child.runId}`);
  });
});

describe("fail points", () => {
  const engine = useTestRunner(dags, { failPoints: true });

  it("'before' fails the try without running the function; 'after' runs it and fails the try; each fires once", async () => {
    const { runner } = engine;
    calls.length = 0;
    await armFailPoint(engine, "pointed", "first", "before");
    await armFailPoint(engine, "pointed", "second", "after");
    const run = await runner.triggerRun("pointed", { triggeredBy: "test" });
    assert.equal((await runner.waitForRun("pointed", run.runId, { timeoutMs: 20_000 })).state, "failed");
    assert.deepEqual(calls, [], "the function of a task failed 'before' did not run");
    const first = (await runner.listTaskInstances("pointed", run.runId)).find((t) => t.taskId === "first");
    assert.match(first?.error ?? "", /fail point: pointed\.first failed before its function ran/);

    await runner.clearTaskInstances("pointed", { runId: run.runId, taskIds: ["first"], onlyFailed: true, includeDownstream: true, includeUpstream: false, dryRun: false, by: "test" });
    assert.equal((await runner.waitForRun("pointed", run.runId, { timeoutMs: 20_000 })).state, "failed");
    assert.deepEqual(calls, [`first:${run.runId}`, `second:${run.runId}`], "'after' ran the function");
    const second = (await runner.listTaskInstances("pointed", run.runId)).find((t) => t.taskId === "second");
    assert.equal(second?.state, "failed");
    assert.match(second?.error ?? "", /failed after its function succeeded/);

    await runner.clearTaskInstances("pointed", { runId: run.runId, taskIds: ["second"], onlyFailed: true, includeDownstream: true, includeUpstream: false, dryRun: false, by: "test" });
    assert.equal((await runner.waitForRun("pointed", run.runId, { timeoutMs: 20_000 })).state, "success", "each point fires once");
  });
});

describe("fail points are ignored by a runner that does not honour them", () => {
  const engine = useTestRunner(dags);

  it("an armed point changes nothing", async () => {
    const { runner } = engine;
    await armFailPoint(engine, "pointed", "first", "before");
    const run = await runner.triggerRun("pointed", { triggeredBy: "test" });
    assert.equal((await runner.waitForRun("pointed", run.runId, { timeoutMs: 20_000 })).state, "success");
  });
});

describe("backoff after a clear", () => {
  it("starts again from the first delay: the retry delay counts the tries of the last grant", () => {
    const dag = defineDag({ id: "backoff" })
      .task("t", { retries: 2, retryDelayMs: 1000, maxRetryDelayMs: 30_000 }, () => undefined)
      .build();
    const none = () => 0;
    // first grant: tries 1..3 (max_tries 3)
    assert.equal(dag.retryDelayInGrant("t", 1, 3, none), 1000);
    assert.equal(dag.retryDelayInGrant("t", 2, 3, none), 2000);
    // after four clears the task is at try 13 of max_tries 15: its grant is tries 13..15
    assert.equal(dag.retryDelayInGrant("t", 13, 15, none), 1000);
    assert.equal(dag.retryDelayInGrant("t", 14, 15, none), 2000);
    // counted over all tries it would have waited the cap
    assert.equal(dag.retryDelayMs("t", 13, none), 30_000);
  });
});
