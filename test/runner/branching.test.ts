// Branch and short-circuit results: the run ends green with the rest skipped; skips cascade to
// tasks that depend only on skipped ones; a branch naming a task that is not downstream fails.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { defineDag } from "../../src/runner/dag.ts";
import { taskStates, triggerAndWait, useTestRunner } from "../../testkit/runner/runner-db.ts";

const ran: string[] = [];
const step = (id: string) => () => {
  ran.push(id);
};

const dags = [
  defineDag({ id: "guarded", params: z.object({ ready: z.boolean() }) })
    .task("check", (ctx) => (ctx.conf.ready ? undefined : { shortCircuit: true }))
    .task("work", { upstream: ["check"] }, step("work"))
    .task("more_work", { upstream: ["work"] }, step("more_work"))
    .task("report", { upstream: ["more_work"] }, step("report"))
    .build(),
  defineDag({ id: "fork", params: z.object({ path: z.enum(["left", "right"]) }) })
    .task("choose", (ctx) => ({ follow: [ctx.conf.path] }))
    .task("left", { upstream: ["choose"] }, step("left"))
    .task("right", { upstream: ["choose"] }, step("right"))
    .task("after_left", { upstream: ["left"] }, step("after_left"))
    .task("join", { upstream: ["after_left", "right"] }, step("join"))
    .build(),
  defineDag({ id: "explicit_skip" })
    .task("start", () => ({ skip: ["optional"] }))
    .task("needed", { upstream: ["start"] }, step("needed"))
    .task("optional", { upstream: ["start"] }, step("optional"))
    .build(),
  defineDag({ id: "bad_branch" })
    .task("a", () => ({ skip: ["not_downstream"] }))
    .task("b", { upstream: ["a"] }, step("b"))
    .task("not_downstream", step("not_downstream"))
    .build(),
];

describe("branching and short-circuit", () => {
  const engine = useTestRunner(dags);

  it("a short-circuit ends the run green with every task after it skipped", async () => {
    ran.length = 0;
    const run = await triggerAndWait(engine.runner, "guarded", { ready: false });
    assert.equal(run.state, "success");
    assert.deepEqual(await taskStates(engine.runner, "guarded", run.runId), {
      check: "success",
      work: "skipped",
      more_work: "skipped",
      report: "skipped",
    });
    assert.deepEqual(ran, []);
    const log = await engine.runner.getTaskLog("guarded", run.runId, "check", 1);
    assert.ok(log.lines.some((l) => l.message.startsWith("branch: skipping")));
  });

  it("without the short-circuit the same DAG runs everything", async () => {
    ran.length = 0;
    const run = await triggerAndWait(engine.runner, "guarded", { ready: true });
    assert.equal(run.state, "success");
    assert.deepEqual(ran, ["work", "more_work", "report"]);
  });

  it("follow skips the other branch; skips cascade, and a join with a skipped upstream is skipped", async () => {
    ran.length = 0;
    const run = await triggerAndWait(engine.runner, "fork", { path: "right" });
    assert.equal(run.state, "success");
    assert.deepEqual(await taskStates(engine.runner, "fork", run.runId), {
      choose: "success",
      left: "skipped",
      right: "success",
      after_left: "skipped",
      join: "skipped",
    });
    assert.deepEqual(ran, ["right"]);
  });

  it("skip names the tasks to skip; the others run", async () => {
    ran.length = 0;
    const run = await triggerAndWait(engine.runner, "explicit_skip");
    assert.equal(run.state, "success");
    assert.deepEqual(await taskStates(engine.runner, "explicit_skip", run.runId), { start: "success", needed: "success", optional: "skipped" });
    assert.deepEqual(ran, ["needed"]);
  });

  it("a branch that names a task not downstream of it fails the task", async () => {
    const run = await triggerAndWait(engine.runner, "bad_branch");
    assert.equal(run.state, "failed");
    const states = await taskStates(engine.runner, "bad_branch", run.runId);
    assert.equal(states.a, "failed");
    assert.equal(states.b, "upstream_failed");
    const a = (await engine.runner.listTaskInstances("bad_branch", run.runId)).find((t) => t.taskId === "a");
    assert.match(a?.error ?? "", /skips not_downstream, not downstream of it/);
  });
});
