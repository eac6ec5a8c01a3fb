// A DAG's error policy (DagOptions.isRetryable): an error it calls permanent fails the task at once
// with retries left, and the log says why; others are retried with jittered exponential backoff that
// is never shorter than the configured delay.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";

class PermanentProbe extends Error {}

let transientLeft = 0;
const dag = defineDag({ id: "policy", isRetryable: (err) => !(err instanceof PermanentProbe) })
  .task("permanent", { retries: 3, retryDelayMs: 10 }, () => {
    throw new PermanentProbe("the statement is wrong");
  })
  .build();
const flaky = defineDag({ id: "policy_flaky", isRetryable: (err) => !(err instanceof PermanentProbe) })
  .task("transient", { retries: 3, retryDelayMs: 10 }, () => {
    if (transientLeft > 0) {
      transientLeft -= 1;
      throw new Error("the server is restarting");
    }
  })
  .build();

describe("a DAG's error policy", () => {
  const engine = useTestRunner([dag, flaky]);

  it("a permanent error fails at once, with retries left, and says so", async () => {
    const run = await engine.runner.triggerRun("policy", { triggeredBy: "test" });
    assert.equal((await engine.runner.waitForRun("policy", run.runId, { timeoutMs: 10_000 })).state, "failed");
    const [ti] = await engine.runner.listTaskInstances("policy", run.runId);
    assert.equal(ti?.tryNumber, 1);
    const log = await engine.runner.getTaskLog("policy", run.runId, "permanent", 1);
    assert.ok(log.lines.some((l) => /permanent error .*not retried/.test(l.message)));
  });

  it("a transient error is retried until it passes", async () => {
    transientLeft = 2;
    const run = await engine.runner.triggerRun("policy_flaky", { triggeredBy: "test" });
    assert.equal((await engine.runner.waitForRun("policy_flaky", run.runId, { timeoutMs: 10_000 })).state, "success");
    assert.equal((await engine.runner.listTaskInstances("policy_flaky", run.runId))[0]?.tryNumber, 3);
  });

  it("the backoff doubles, is capped, and its jitter only ever adds up to a quarter", () => {
    const d = defineDag({ id: "delays" }).task("t", { retries: 5, retryDelayMs: 1000, maxRetryDelayMs: 3000 }, () => undefined).build();
    assert.equal(d.retryDelayMs("t", 1, () => 0), 1000);
    assert.equal(d.retryDelayMs("t", 2, () => 0), 2000);
    assert.equal(d.retryDelayMs("t", 3, () => 0), 3000);
    assert.equal(d.retryDelayMs("t", 2, () => 1), 2500);
    for (let i = 0; i < 100; i++) {
      const ms = d.retryDelayMs("t", 1);
      assert.ok(ms >= 1000 && ms <= 1250, String(ms));
    }
  });
});
