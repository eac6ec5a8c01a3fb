// Exclusive resources (000007_exclusive_resources.sql): DAGs that name the same resource never run
// at once; a queued run says what it waits for and who holds it, and holds no worker slot; a run
// started by a waiting trigger runs inside its ancestors' hold (no deadlock, grandchildren too);
// 20 mixed triggers at once advance a shared "position" by exactly one each, with no overlap.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { DagDefinitionError } from "../../src/runner/errors.ts";
import { Gate, sleep, useTestRunner, waitUntil } from "../../testkit/runner/runner-db.ts";

let holderGate = new Gate();
/** The shared state the "world" DAGs step: read, think, write, like world_next_day and world_position. */
let position = 0;
const stepped: { runId: string; read: number; start: number; end: number }[] = [];

async function step(runId: string): Promise<void> {
  const start = performance.now();
  const read = position;
  await sleep(5);
  position = read + 1;
  stepped.push({ runId, read, start, end: performance.now() });
}

const dags = [
  defineDag({ id: "holder", exclusive: ["res"] })
    .task("hold", async () => {
      await holderGate.opened;
    })
    .build(),
  defineDag({ id: "contender", exclusive: ["res"] })
    .task("work", () => undefined)
    .build(),
  defineDag({ id: "free_dag" })
    .task("work", () => undefined)
    .build(),
  defineDag({ id: "waits_on_paused", exclusive: ["res"] })
    .waitingTrigger("call", { triggerDagId: "paused_child" })
    .build(),
  defineDag({ id: "paused_child", isPausedUponCreation: true })
    .task("work", () => undefined)
    .build(),
  // a chain in which every level names the resource: parent -> child -> grandchild
  defineDag({ id: "parent", exclusive: ["res"] })
    .waitingTrigger("call_child", { triggerDagId: "child" })
    .build(),
  defineDag({ id: "child", exclusive: ["res"] })
    .waitingTrigger("call_grandchild", { triggerDagId: "grandchild" })
    .build(),
  defineDag({ id: "grandchild", exclusive: ["res"] })
    .task("work", () => undefined)
    .build(),
];

// three DAGs that step the same state, as world_next_day, world_live_day and world_recreate do
const steppingDags = ["step_a", "step_b", "step_c"].map((id) =>
  defineDag({ id, exclusive: ["world"], maxActiveRuns: 4 })
    .task("step", (ctx) => step(ctx.runId))
    .build(),
);

describe("exclusive resources", () => {
  // one worker slot: a queued run waiting for a resource must not take it
  const engine = useTestRunner(dags, { concurrency: 1, beforeStop: () => holderGate.open() });

  it("a run that cannot take its resource stays queued, names the holder, and starts when it is freed", async () => {
    holderGate = new Gate();
    const holder = await engine.runner.triggerRun("holder", { triggeredBy: "test" });
    await waitUntil("the holder to run", async () => (await engine.runner.getRun("holder", holder.runId)).state === "running");
    const contender = await engine.runner.triggerRun("contender", { triggeredBy: "test" });
    const waiting = await waitUntil("the contender to say what it waits for", async () => {
      const run = await engine.runner.getRun("contender", contender.runId);
      return run.waitingFor === null ? undefined : run;
    });
    assert.equal(waiting.state, "queued");
    assert.equal(waiting.waitingFor, `res held by holder/${holder.runId}`);

    await sleep(200);
    assert.equal((await engine.runner.getRun("contender", contender.runId)).state, "queued");

    holderGate.open();
    const done = await engine.runner.waitForRun("contender", contender.runId, { timeoutMs: 10_000 });
    const held = await engine.runner.getRun("holder", holder.runId);
    if (done.state !== "success") {
      // say which side stalled: the holder not ended (its task never picked up), or the contender
      // not started when the holder released the resource
      const tasks = async (dagId: string, runId: string) =>
        (await engine.runner.listTaskInstances(dagId, runId)).map((t) => `${t.taskId}=${t.state}`).join(",");
      assert.fail(
        `contender ${done.state}, expected success (waiting for ${done.waitingFor ?? "nothing"}; tasks ${await tasks("contender", contender.runId)}); holder ${held.state} ended ${held.endDate?.toISOString() ?? "never"} (tasks ${await tasks("holder", holder.runId)})`,
      );
    }
    assert.equal(done.waitingFor, null, "a started run no longer says it waits");
    assert.ok(done.startDate && held.endDate && done.startDate >= held.endDate, "the contender started only after the holder ended");
  });

  it("a queued run waiting for a resource holds no worker slot", async () => {
    // the parent holds res while its waiting trigger waits (deferred, no slot) on a paused child
    const parent = await engine.runner.triggerRun("waits_on_paused", { triggeredBy: "test" });
    await waitUntil("the parent to defer", async () => (await engine.runner.getRun("waits_on_paused", parent.runId)).state === "running");
    const contender = await engine.runner.triggerRun("contender", { triggeredBy: "test" });
    await waitUntil("the contender to wait", async () => (await engine.runner.getRun("contender", contender.runId)).waitingFor !== null);
    // the only worker slot is free: a DAG without the resource runs while the contender waits
    const free = await engine.runner.triggerRun("free_dag", { triggeredBy: "test" });
    assert.equal((await engine.runner.waitForRun("free_dag", free.runId, { timeoutMs: 10_000 })).state, "success");
    const still = await engine.runner.getRun("contender", contender.runId);
    assert.equal(still.state, "queued");
    assert.equal(still.waitingFor, `res held by waits_on_paused/${parent.runId}`);
    await engine.runner.setPaused("paused_child", false);
    assert.equal((await engine.runner.waitForRun("waits_on_paused", parent.runId, { timeoutMs: 10_000 })).state, "success");
    assert.equal((await engine.runner.waitForRun("contender", contender.runId, { timeoutMs: 10_000 })).state, "success");
  });

  it("a child and a grandchild started by waiting triggers run inside the parent's hold (no deadlock)", async () => {
    const parent = await engine.runner.triggerRun("parent", { triggeredBy: "test" });
    // a standalone grandchild queued meanwhile must wait for the whole chain, not jump into it
    const outsider = await engine.runner.triggerRun("grandchild", { triggeredBy: "test" });
    const finished = await engine.runner.waitForRun("parent", parent.runId, { timeoutMs: 15_000 });
    assert.equal(finished.state, "success");
    const out = await engine.runner.waitForRun("grandchild", outsider.runId, { timeoutMs: 15_000 });
    assert.equal(out.state, "success");
    assert.ok(out.startDate && finished.endDate && out.startDate >= finished.endDate, "the outsider ran after the chain");
    const children = await engine.runner.listRuns("child", { limit: 10, offset: 0, order: "asc" });
    assert.ok(children.items.every((r) => r.state === "success"));
  });

  it("a resource name is validated when the DAG is defined", () => {
    assert.throws(() => defineDag({ id: "bad_resource", exclusive: ["World!"] }).task("t", () => undefined).build(), DagDefinitionError);
    assert.throws(() => defineDag({ id: "twice", exclusive: ["a", "a"] }).task("t", () => undefined).build(), DagDefinitionError);
  });
});

describe("exclusive resources under concurrency", () => {
  // enough slots that, without the resource, the three DAGs' runs would overlap and read the same state
  const engine = useTestRunner(steppingDags, { concurrency: 6 });

  it("20 mixed triggers at once: the shared state advances by exactly 20, one run at a time", async () => {
    position = 0;
    stepped.length = 0;
    const ids = ["step_a", "step_b", "step_c"] as const;
    const triggered = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const dagId = ids[i % 3] ?? "step_a";
        return engine.runner.triggerRun(dagId, { triggeredBy: "test" }).then((r) => ({ dagId, runId: r.runId }));
      }),
    );
    const finished = await Promise.all(triggered.map((t) => engine.runner.waitForRun(t.dagId, t.runId, { timeoutMs: 30_000 })));
    assert.ok(finished.every((r) => r.state === "success"));
    assert.equal(position, 20, "every run advanced the state by one");
    assert.deepEqual(stepped.map((s) => s.read), Array.from({ length: 20 }, (_, i) => i), "no two runs read the same state");
    for (let i = 1; i < stepped.length; i++) {
      const prev = stepped[i - 1];
      const next = stepped[i];
      assert.ok(prev && next && next.start >= prev.end, `step ${i} began before step ${i - 1} ended`);
    }
  });
});
