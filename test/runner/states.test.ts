// Every run and task state transition, on a real runner and Postgres: queued runs, scheduled,
// queued, running, deferred, up_for_retry, success, failed, upstream_failed and skipped tasks;
// one failure ends the run at once; the manifest gates success; terminal stays terminal.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { recordTaskResult } from "../../src/runner/task-tries.ts";
import { createPool } from "../../src/runner/db.ts";
import { Gate, taskStates, triggerAndWait, useTestRunner, waitForTaskState, waitUntil, withClient } from "../../testkit/runner/runner-db.ts";

const gates = new Map<string, Gate>();
const gate = (name: string): Gate => {
  let g = gates.get(name);
  if (!g) gates.set(name, (g = new Gate()));
  return g;
};
const waitGate = (name: string) => async () => {
  await gate(name).opened;
};

const dags = [
  defineDag({ id: "lifecycle", isPausedUponCreation: true })
    .task("a", async (ctx) => {
      ctx.log.info("a is waiting for its gate");
      await gate("lifecycle.a").opened;
      ctx.log.warn("a passed its gate");
    })
    .task("b", { upstream: ["a"] }, () => undefined)
    .build(),
  defineDag({ id: "wide", maxActiveRuns: 1 })
    .task("w1", waitGate("wide"))
    .task("w2", waitGate("wide"))
    .task("w3", waitGate("wide"))
    .task("w4", waitGate("wide"))
    .task("w5", waitGate("wide"))
    .build(),
  defineDag({ id: "failing" })
    .task("root", () => undefined)
    .task("boom", { upstream: ["root"] }, async () => {
      await gate("failing.slow_started").opened;
      throw new Error("boom went wrong");
    })
    .task("after_boom", { upstream: ["boom"] }, () => undefined)
    .task("after_after", { upstream: ["after_boom"] }, () => undefined)
    .task("slow", { upstream: ["root"] }, async () => {
      gate("failing.slow_started").open();
      await gate("failing.slow").opened;
    })
    .task("after_slow", { upstream: ["slow"] }, () => undefined)
    .build(),
  defineDag({ id: "flaky" })
    .task("once_bad", { retries: 2, retryDelayMs: 600 }, (ctx) => {
      if (ctx.tryNumber === 1) throw new Error("first try fails");
      ctx.log.info(`try ${ctx.tryNumber} works`);
    })
    .build(),
  defineDag({ id: "child_blocks" }).task("hold", waitGate("child")).build(),
  defineDag({ id: "parent_waits" })
    .waitingTrigger("wait_child", { triggerDagId: "child_blocks", conf: () => ({ from: "parent" }) })
    .build(),
  defineDag({ id: "gated_pair" }).task("first", waitGate("pair")).task("second", { upstream: ["first"] }, () => undefined).build(),
];

describe("run and task states", () => {
  const engine = useTestRunner(dags, {
    concurrency: 4,
    beforeStop: () => {
      for (const g of gates.values()) g.open();
    },
  });

  it("queued run -> running -> success; tasks scheduled -> running -> success", async () => {
    const run = await engine.runner.triggerRun("lifecycle", { triggeredBy: "test" });
    // the DAG starts paused: the run waits queued, its tasks scheduled
    assert.equal(run.state, "queued");
    assert.deepEqual(run.manifest, ["a", "b"]);
    assert.deepEqual(await taskStates(engine.runner, "lifecycle", run.runId), { a: "scheduled", b: "scheduled" });
    await engine.runner.setPaused("lifecycle", false);
    await waitForTaskState(engine.runner, "lifecycle", run.runId, "a", "running");
    const running = await engine.runner.getRun("lifecycle", run.runId);
    assert.equal(running.state, "running");
    assert.ok(running.startDate);
    assert.equal((await taskStates(engine.runner, "lifecycle", run.runId)).b, "scheduled");
    gate("lifecycle.a").open();
    const done = await engine.runner.waitForRun("lifecycle", run.runId, { timeoutMs: 10_000 });
    assert.equal(done.state, "success");
    assert.ok(done.endDate && done.startDate && done.endDate >= done.startDate);
    const tis = await engine.runner.listTaskInstances("lifecycle", run.runId);
    for (const ti of tis) {
      assert.equal(ti.state, "success");
      assert.equal(ti.tryNumber, 1);
      assert.ok(ti.durationMs !== null && ti.durationMs >= 0);
    }
    const log = await engine.runner.getTaskLog("lifecycle", run.runId, "a", 1);
    assert.deepEqual(log.lines.map((l) => [l.level, l.message]), [
      ["info", "a is waiting for its gate"],
      ["warn", "a passed its gate"],
    ]);
  });

  it("a task waits queued while every worker slot is busy", async () => {
    const run = await engine.runner.triggerRun("wide", { triggeredBy: "test" });
    const states = await waitUntil("four running, one queued", async () => {
      const s = Object.values(await taskStates(engine.runner, "wide", run.runId)).sort();
      return s.join() === "queued,running,running,running,running" ? s : undefined;
    });
    assert.equal(states.length, 5);
    gate("wide").open();
    assert.equal((await engine.runner.waitForRun("wide", run.runId, { timeoutMs: 10_000 })).state, "success");
  });

  it("one failure fails the run at once: downstream upstream_failed, pending skipped, running ones finish", async () => {
    const run = await engine.runner.triggerRun("failing", { triggeredBy: "test" });
    const failed = await engine.runner.waitForRun("failing", run.runId, { timeoutMs: 10_000 });
    assert.equal(failed.state, "failed", "the run must not wait for the still-running task");
    assert.deepEqual(await taskStates(engine.runner, "failing", run.runId), {
      root: "success",
      boom: "failed",
      after_boom: "upstream_failed",
      after_after: "upstream_failed",
      slow: "running",
      after_slow: "skipped",
    });
    const boom = (await engine.runner.listTaskInstances("failing", run.runId)).find((t) => t.taskId === "boom");
    assert.equal(boom?.error, "boom went wrong");
    gate("failing.slow").open();
    await waitForTaskState(engine.runner, "failing", run.runId, "slow", "success");
    // the late success is recorded, but starts nothing and reopens nothing
    const after = await engine.runner.getRun("failing", run.runId);
    assert.equal(after.state, "failed");
    assert.deepEqual(after.endDate, failed.endDate);
    assert.equal((await taskStates(engine.runner, "failing", run.runId)).after_slow, "skipped");
  });

  it("a failed try waits up_for_retry for its delay, then the next try succeeds", async () => {
    const run = await engine.runner.triggerRun("flaky", { triggeredBy: "test" });
    await waitForTaskState(engine.runner, "flaky", run.runId, "once_bad", "up_for_retry");
    const done = await engine.runner.waitForRun("flaky", run.runId, { timeoutMs: 10_000 });
    assert.equal(done.state, "success");
    const [ti] = await engine.runner.listTaskInstances("flaky", run.runId);
    assert.equal(ti?.tryNumber, 2);
    assert.equal(ti?.maxTries, 3);
    const first = await engine.runner.getTaskLog("flaky", run.runId, "once_bad", 1);
    assert.ok(first.lines.some((l) => l.level === "error" && l.message.includes("first try fails")));
    const second = await engine.runner.getTaskLog("flaky", run.runId, "once_bad", 2);
    assert.deepEqual(second.lines.map((l) => l.message), ["try 2 works"]);
  });

  it("a waiting trigger is deferred while its child runs, and succeeds with it", async () => {
    const run = await engine.runner.triggerRun("parent_waits", { triggeredBy: "test" });
    await waitForTaskState(engine.runner, "parent_waits", run.runId, "wait_child", "deferred");
    const [ti] = await engine.runner.listTaskInstances("parent_waits", run.runId);
    assert.equal(ti?.childDagId, "child_blocks");
    const child = await engine.runner.getRun("child_blocks", ti?.childRunId ?? "");
    assert.equal(child.state, "running");
    assert.deepEqual(child.conf, { from: "parent" });
    assert.equal(child.runType, "triggered");
    assert.deepEqual([child.parentDagId, child.parentRunId, child.parentTaskId], ["parent_waits", run.runId, "wait_child"]);
    gate("child").open();
    assert.equal((await engine.runner.waitForRun("parent_waits", run.runId, { timeoutMs: 10_000 })).state, "success");
    assert.equal((await taskStates(engine.runner, "parent_waits", run.runId)).wait_child, "success");
  });

  it("success needs every manifest task: a declared task without an instance holds the run", async () => {
    const run = await engine.runner.triggerRun("gated_pair", { triggeredBy: "test" });
    await waitForTaskState(engine.runner, "gated_pair", run.runId, "first", "running");
    await withClient(engine.db, (c) =>
      c.query(
        `delete from runner.task_instances where task_id = 'second'
            and run_pk = (select id from runner.dag_runs where run_id = $1)`,
        [run.runId],
      ),
    );
    gate("pair").open();
    await waitForTaskState(engine.runner, "gated_pair", run.runId, "first", "success");
    const held = await engine.runner.waitForRun("gated_pair", run.runId, { timeoutMs: 500 });
    assert.equal(held.state, "running", "a run missing a declared task must not complete");
  });

  it("terminal stays terminal: no transition reopens a finished run or task", async () => {
    const run = await triggerAndWait(engine.runner, "flaky");
    assert.equal(run.state, "success");
    await withClient(engine.db, async (c) => {
      const { rows } = await c.query<{ id: number; ti: number; token: string }>(
        `select r.id, ti.id as ti, ti.attempt_token as token from runner.dag_runs r
           join runner.task_instances ti on ti.run_pk = r.id where r.run_id = $1`,
        [run.runId],
      );
      const row = rows[0];
      assert.ok(row);
      const completed = await c.query<{ changed: boolean }>("select runner.complete_run($1, 'failed') as changed", [row.id]);
      assert.equal(completed.rows[0]?.changed, false);
      await c.query("select runner.fail_run($1, $2)", [row.id, row.ti]);
      // a result presented again with the last try's own token is refused too
      const pool = createPool(engine.db.url, 1);
      try {
        const late = await recordTaskResult(pool, Number(row.ti), row.token, {
          outcome: "failed",
          error: "late",
          retryable: true,
          retryDelayMs: 0,
          skip: [],
          log: [],
        });
        assert.equal(late.accepted, false);
        assert.equal(late.taskState, "success");
      } finally {
        await pool.end();
      }
    });
    const again = await engine.runner.getRun("flaky", run.runId);
    assert.equal(again.state, "success");
    assert.deepEqual(again.endDate, run.endDate);
    assert.deepEqual(await taskStates(engine.runner, "flaky", run.runId), { once_bad: "success" });
  });
});
