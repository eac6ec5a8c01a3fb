// The waiting trigger holds no worker slot while it waits: with ONE slot, a chain of DAGs that
// each wait for the next (A waits B waits C waits D) completes. A failed child fails its parent
// with an error naming the child's run.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { defineDag } from "../../src/runner/dag.ts";
import { Gate, taskStates, triggerAndWait, useTestRunner, waitForTaskState, withClient } from "../../testkit/runner/runner-db.ts";

const seen: { dagId: string; conf: unknown; at: number }[] = [];
const slowChild = new Gate();
const depth = z.object({ depth: z.number().int() });

const dags = [
  defineDag({ id: "chain_a", params: depth })
    .task("before", (ctx) => void seen.push({ dagId: ctx.dagId, conf: ctx.conf, at: Date.now() }))
    .waitingTrigger("wait_b", { upstream: ["before"], triggerDagId: "chain_b", conf: (ctx) => ({ depth: ctx.conf.depth + 1 }) })
    .task("after", { upstream: ["wait_b"] }, () => undefined)
    .build(),
  defineDag({ id: "chain_b", params: depth })
    .waitingTrigger("wait_c", { triggerDagId: "chain_c", conf: (ctx) => ({ depth: ctx.conf.depth + 1 }) })
    .build(),
  defineDag({ id: "chain_c", params: depth })
    .waitingTrigger("wait_d", { triggerDagId: "chain_d", conf: (ctx) => ({ depth: ctx.conf.depth + 1 }) })
    .build(),
  defineDag({ id: "chain_d", params: depth })
    .task("leaf", (ctx) => void seen.push({ dagId: ctx.dagId, conf: ctx.conf, at: Date.now() }))
    .build(),
  defineDag({ id: "doomed_child" })
    .task("fail", () => {
      throw new Error("child broke");
    })
    .build(),
  defineDag({ id: "hopeful_parent" }).waitingTrigger("wait", { triggerDagId: "doomed_child" }).build(),
  defineDag({ id: "picky_child", params: z.object({ n: z.number() }) }).task("x", () => undefined).build(),
  defineDag({ id: "slow_child" }).task("hold", async () => void (await slowChild.opened)).build(),
  defineDag({ id: "forgotten_parent" }).waitingTrigger("wait", { triggerDagId: "slow_child" }).build(),
  defineDag({ id: "careless_parent" }).waitingTrigger("wait", { triggerDagId: "picky_child", conf: () => ({ n: "one" }) }).build(),
];

describe("waiting trigger", () => {
  const engine = useTestRunner(dags, { concurrency: 1, leaseSeconds: 2, beforeStop: () => slowChild.open() });

  it("with one worker slot, A waits B waits C waits D completes", async () => {
    const run = await triggerAndWait(engine.runner, "chain_a", { depth: 0 }, 20_000);
    assert.equal(run.state, "success");
    assert.deepEqual(await taskStates(engine.runner, "chain_a", run.runId), { before: "success", wait_b: "success", after: "success" });
    // conf passed through each level, and each child names its parent
    assert.deepEqual(seen.map((s) => [s.dagId, s.conf]), [["chain_a", { depth: 0 }], ["chain_d", { depth: 3 }]]);
    let parent = { dagId: "chain_a", runId: run.runId, taskId: "wait_b" };
    for (const [dagId, taskId] of [["chain_b", "wait_c"], ["chain_c", "wait_d"], ["chain_d", null]] as const) {
      const ti = (await engine.runner.listTaskInstances(parent.dagId, parent.runId)).find((t) => t.taskId === parent.taskId);
      assert.equal(ti?.childDagId, dagId);
      const child = await engine.runner.getRun(dagId, ti?.childRunId ?? "");
      assert.equal(child.state, "success");
      assert.deepEqual([child.parentDagId, child.parentRunId, child.parentTaskId], [parent.dagId, parent.runId, parent.taskId]);
      if (taskId) parent = { dagId, runId: child.runId, taskId };
    }
  });

  it("a failed child fails the waiting trigger, naming the child's run", async () => {
    const run = await triggerAndWait(engine.runner, "hopeful_parent");
    assert.equal(run.state, "failed");
    const [ti] = await engine.runner.listTaskInstances("hopeful_parent", run.runId);
    assert.equal(ti?.state, "failed");
    assert.ok(ti?.childRunId);
    assert.equal(ti?.error, `child run ${ti?.childRunId} of DAG doomed_child ended failed`);
    const log = await engine.runner.getTaskLog("hopeful_parent", run.runId, "wait", 1);
    assert.ok(log.lines.some((l) => l.message.includes(ti?.childRunId ?? "?")));
  });

  it("a child conf that fails the child's params fails the trigger without creating a run", async () => {
    const run = await triggerAndWait(engine.runner, "careless_parent");
    assert.equal(run.state, "failed");
    const [ti] = await engine.runner.listTaskInstances("careless_parent", run.runId);
    assert.match(ti?.error ?? "", /conf for DAG 'picky_child' is invalid at 'n'/);
    assert.equal(ti?.childRunId, null);
    assert.equal((await engine.runner.listRuns("picky_child", { limit: 10, offset: 0 })).totalEntries, 0);
  });

  it("a waiting trigger whose resume job was lost is resumed by the reaper", async () => {
    const run = await engine.runner.triggerRun("forgotten_parent", { triggeredBy: "test" });
    await waitForTaskState(engine.runner, "forgotten_parent", run.runId, "wait", "deferred");
    const [ti] = await engine.runner.listTaskInstances("forgotten_parent", run.runId);
    // end the child and lose the resume job in the same transaction
    await withClient(engine.db, async (c) => {
      await c.query("begin");
      await c.query("select runner.complete_run(id, 'success') from runner.dag_runs where run_id = $1", [ti?.childRunId]);
      await c.query(
        `delete from graphile_worker._private_jobs
          where task_id = (select id from graphile_worker._private_tasks where identifier = 'runner_resume')`,
      );
      await c.query("commit");
    });
    const done = await engine.runner.waitForRun("forgotten_parent", run.runId, { timeoutMs: 8_000 });
    assert.equal(done.state, "success");
    slowChild.open();
  });
});
