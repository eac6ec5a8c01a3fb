// Variables: every change is recorded (old value, new value, when, who, which run), through the
// service and from tasks; a try that lost its task can no longer write.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { TryNotHolderError, VariableNotFoundError } from "../../src/runner/errors.ts";
import { Gate, triggerAndWait, useTestRunner, waitForTaskState, withClient } from "../../testkit/runner/runner-db.ts";

let zombieGate = new Gate();
let reportZombie: (outcome: unknown) => void = () => undefined;

const dags = [
  defineDag({ id: "position_keeper" })
    .task("advance", async (ctx) => {
      const current = Number((await ctx.variables.get("world_position")) ?? "0");
      await ctx.variables.set("world_position", String(current + 1));
      await ctx.variables.delete("scratch");
      await ctx.variables.delete("never_existed"); // deleting nothing is not an error for a task
    })
    .build(),
  defineDag({ id: "zombie" })
    .task("stale_writer", async (ctx) => {
      await zombieGate.opened;
      reportZombie(await ctx.variables.set("world_position", "999").then(() => "written", (err: unknown) => err));
    })
    .build(),
];

describe("variables", () => {
  const engine = useTestRunner(dags, { beforeStop: () => zombieGate.open() });

  it("set, get, list and delete through the service; history records old/new/who", async () => {
    await engine.runner.setVariable("world_position", "5", { changedBy: "api:alice", description: "days played" });
    const v = await engine.runner.getVariable("world_position");
    assert.deepEqual([v.key, v.value, v.description], ["world_position", "5", "days played"]);
    await engine.runner.setVariable("world_position", "6", { changedBy: "cli" }); // keeps the description
    assert.equal((await engine.runner.getVariable("world_position")).description, "days played");
    await engine.runner.setVariable("scratch", "x", { changedBy: "api:bob" });
    const page = await engine.runner.listVariables({ limit: 1, offset: 1 });
    assert.deepEqual([page.totalEntries, page.items.map((i) => i.key)], [2, ["world_position"]]);
    await engine.runner.deleteVariable("scratch", { changedBy: "api:bob" });
    await assert.rejects(engine.runner.getVariable("scratch"), VariableNotFoundError);
    await assert.rejects(engine.runner.deleteVariable("scratch", { changedBy: "api:bob" }), VariableNotFoundError);
    const history = await engine.runner.variableHistory("world_position");
    assert.deepEqual(history.map((h) => [h.oldValue, h.newValue, h.changedBy, h.dagId, h.runId]), [
      [null, "5", "api:alice", null, null],
      ["5", "6", "cli", null, null],
    ]);
    assert.deepEqual((await engine.runner.variableHistory("scratch")).map((h) => [h.oldValue, h.newValue]), [[null, "x"], ["x", null]]);
  });

  it("a task's changes are recorded with its run", async () => {
    await engine.runner.setVariable("scratch", "temp", { changedBy: "api:bob" });
    const run = await triggerAndWait(engine.runner, "position_keeper");
    assert.equal(run.state, "success");
    assert.equal((await engine.runner.getVariable("world_position")).value, "7");
    const last = (await engine.runner.variableHistory("world_position")).at(-1);
    assert.deepEqual([last?.oldValue, last?.newValue, last?.changedBy, last?.dagId, last?.runId], [
      "6",
      "7",
      `run:position_keeper/${run.runId}/advance`,
      "position_keeper",
      run.runId,
    ]);
    const deleted = (await engine.runner.variableHistory("scratch")).at(-1);
    assert.deepEqual([deleted?.oldValue, deleted?.newValue, deleted?.runId], ["temp", null, run.runId]);
    assert.deepEqual(await engine.runner.variableHistory("never_existed"), []);
  });

  it("a try that no longer holds its task cannot write (zombie fencing)", async () => {
    zombieGate = new Gate();
    const zombieOutcome = new Promise<unknown>((resolve) => (reportZombie = resolve));
    const run = await engine.runner.triggerRun("zombie", { triggeredBy: "test" });
    await waitForTaskState(engine.runner, "zombie", run.runId, "stale_writer", "running");
    // another worker took the task over: the running try's token no longer matches
    await withClient(engine.db, (c) =>
      c.query(
        `update runner.task_instances set attempt_token = gen_random_uuid()
          where run_pk = (select id from runner.dag_runs where run_id = $1)`,
        [run.runId],
      ),
    );
    zombieGate.open();
    const outcome = await zombieOutcome;
    assert.ok(outcome instanceof TryNotHolderError, `expected TryNotHolderError, got ${String(outcome)}`);
    assert.equal((await engine.runner.getVariable("world_position")).value, "7");
  });
});
