// A step run pins its position (dags/support/step-position.ts): read_position records what it read,
// later tasks use that value, and fail naming both values when world_position moved under the run
// or another run took the pin. A task context of the test's making; the variables are a Map.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TaskContext } from "../../src/runner/dag.ts";
import { NonRetryableError } from "../../src/runner/errors.ts";
import { POSITION_PIN_KEY, pinnedPosition, pinPosition } from "../../dags/support/step-position.ts";

function contextOf(vars: Map<string, string>, runId: string): TaskContext<unknown> {
  const quiet = () => undefined;
  return {
    dagId: "world_next_day",
    runId,
    taskId: "t",
    tryNumber: 1,
    maxTries: 1,
    logicalDate: null,
    conf: {},
    signal: new AbortController().signal,
    log: { info: quiet, warn: quiet, error: quiet },
    variables: {
      get: (key) => Promise.resolve(vars.get(key) ?? null),
      set: (key, value) => Promise.resolve(void vars.set(key, value)),
      delete: (key) => Promise.resolve(void vars.delete(key)),
    },
    xcom: { push: () => Promise.reject(new Error("no XCom here")), pull: () => Promise.resolve(undefined) },
  };
}

describe("a step run pins its position", () => {
  it("later tasks use the pinned value while the variable stays put", async () => {
    const vars = new Map([["world_position", "9"]]);
    const ctx = contextOf(vars, "run_a");
    assert.equal((await pinPosition(ctx)).position, 9);
    assert.deepEqual(JSON.parse(vars.get(POSITION_PIN_KEY) ?? "null"), { dag_id: "world_next_day", run_id: "run_a", position: 9 });
    assert.equal((await pinnedPosition(ctx)).position, 9);
  });

  it("a moved variable fails the task naming both values", async () => {
    const vars = new Map([["world_position", "9"]]);
    const ctx = contextOf(vars, "run_b");
    await pinPosition(ctx);
    vars.set("world_position", "10");
    await assert.rejects(pinnedPosition(ctx), (err: Error) => err instanceof NonRetryableError && /is 10, but this run pinned 9/.test(err.message));
  });

  it("set_position's retry accepts the value this run already wrote, and nothing else", async () => {
    const vars = new Map([["world_position", "9"]]);
    const ctx = contextOf(vars, "run_c");
    await pinPosition(ctx);
    vars.set("world_position", "11");
    assert.equal((await pinnedPosition(ctx, (p) => p + 2)).position, 9);
    vars.set("world_position", "12");
    await assert.rejects(pinnedPosition(ctx, (p) => p + 2), /is 12, but this run pinned 9/);
  });

  it("a pin taken by another run stops this one", async () => {
    const vars = new Map([["world_position", "9"]]);
    await pinPosition(contextOf(vars, "run_d"));
    await pinPosition(contextOf(vars, "run_e"));
    await assert.rejects(pinnedPosition(contextOf(vars, "run_d")), /belongs to world_next_day\/run_e, not to this run/);
  });

  it("the guard still refuses a world that is not ready, naming the value", async () => {
    await assert.rejects(pinPosition(contextOf(new Map([["world_position", "0"]]), "run_f")), /world_position is 0.*make up/);
  });
});
