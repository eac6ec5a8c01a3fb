// Stopping a runner: running tries get the grace period, then their signals abort and the try is
// handed back (lost, retried if it has tries left) for another runner to pick up.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import type { Runner } from "../../src/runner/runner.ts";
import { type TestDatabase, createTestDatabase, startRunner, waitForTaskState, withClient } from "../../testkit/runner/runner-db.ts";
import { coerceError } from "../../src/errors.ts";

const dags = [
  defineDag({ id: "long_haul" })
    .task("patient", { retries: 1, retryDelayMs: 0 }, async (ctx) => {
      if (ctx.tryNumber > 1) return;
      await new Promise<void>((_, reject) => ctx.signal.addEventListener("abort", () => reject(coerceError(ctx.signal.reason))));
    })
    .build(),
];

describe("runner shutdown", () => {
  let db: TestDatabase;
  let second: Runner | undefined;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await second?.stop();
    await db.drop();
  });

  it("aborts running tries after the grace period and hands them to the next runner", async () => {
    const first = await startRunner(db, dags, { shutdownGraceMs: 300 });
    const run = await first.triggerRun("long_haul", { triggeredBy: "test" });
    await waitForTaskState(first, "long_haul", run.runId, "patient", "running");
    const t0 = performance.now();
    await first.stop();
    assert.ok(performance.now() - t0 < 3_000, "stop waited for the grace period, not for the task");
    const tries = await withClient(db, async (c) =>
      (await c.query<{ state: string; error: string }>("select state, error from runner.task_tries order by try_number")).rows,
    );
    assert.deepEqual(tries.map((t) => t.state), ["lost"]);
    assert.match(tries[0]?.error ?? "", /RunnerShutdownError/);

    second = await startRunner(db, dags);
    const done = await second.waitForRun("long_haul", run.runId, { timeoutMs: 10_000 });
    assert.equal(done.state, "success");
    const [ti] = await second.listTaskInstances("long_haul", run.runId);
    assert.equal(ti?.tryNumber, 2);
  });
});
