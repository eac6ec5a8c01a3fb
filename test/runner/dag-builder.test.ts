// Load-time validation of DAGs and the registry, conf validation, backoff and branch rules.
// Pure: no database.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { defineDag } from "../../src/runner/dag.ts";
import { ConfValidationError, DagDefinitionError } from "../../src/runner/errors.ts";
import { DagRegistry } from "../../src/runner/registry.ts";
import { dueInstant } from "../../src/runner/scheduler.ts";

const noop = () => undefined;

function definitionError(build: () => unknown): DagDefinitionError {
  try {
    build();
  } catch (err) {
    assert.ok(err instanceof DagDefinitionError, `expected DagDefinitionError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected the DAG to be rejected");
}

describe("DAG builder: load-time validation", () => {
  it("rejects a cycle, naming the DAG and a task on it", () => {
    const err = definitionError(() =>
      defineDag({ id: "loopy" })
        .task("a", { upstream: ["c"] }, noop)
        .task("b", { upstream: ["a"] }, noop)
        .task("c", { upstream: ["b"] }, noop)
        .task("d", noop)
        .build(),
    );
    assert.equal(err.dagId, "loopy");
    assert.ok(["a", "b", "c"].includes(err.taskId ?? ""), `task on the cycle expected, got ${err.taskId}`);
    assert.match(err.message, /DAG 'loopy' task '[abc]': dependency cycle: [abc] -> [abc] -> [abc] -> [abc]/);
  });

  it("rejects a task that depends on itself", () => {
    const err = definitionError(() => defineDag({ id: "selfish" }).task("a", { upstream: ["a"] }, noop).build());
    assert.equal(err.taskId, "a");
    assert.match(err.message, /cycle: a -> a/);
  });

  it("rejects an unknown upstream, naming the DAG, the task and the missing upstream", () => {
    const err = definitionError(() => defineDag({ id: "typo" }).task("a", noop).task("b", { upstream: ["aa"] }, noop).build());
    assert.equal(err.message, "DAG 'typo' task 'b': upstream task 'aa' does not exist");
  });

  it("rejects a duplicate task id", () => {
    const err = definitionError(() => defineDag({ id: "twice" }).task("a", noop).task("a", noop).build());
    assert.equal(err.message, "DAG 'twice' task 'a': the task id is declared twice");
  });

  it("rejects bad ids, limits and schedules", () => {
    assert.match(definitionError(() => defineDag({ id: "bad id" }).task("a", noop).build()).message, /DAG id/);
    assert.match(definitionError(() => defineDag({ id: "x" }).task("a b", noop).build()).message, /task 'a b'/);
    assert.match(definitionError(() => defineDag({ id: "x", maxActiveRuns: 0 }).task("a", noop).build()).message, /maxActiveRuns/);
    assert.match(definitionError(() => defineDag({ id: "x" }).task("a", { retries: -1 }, noop).build()).message, /retries/);
    assert.match(definitionError(() => defineDag({ id: "x", schedule: "not cron" }).task("a", noop).build()).message, /cron/);
    assert.match(definitionError(() => defineDag({ id: "x", schedule: { everySeconds: 0 } }).task("a", noop).build()).message, /everySeconds/);
    assert.match(definitionError(() => defineDag({ id: "x" }).build()).message, /at least one task/);
  });

  it("orders the manifest topologically, keeping declaration order among independent tasks", () => {
    const dag = defineDag({ id: "order" })
      .task("load", { upstream: ["extract", "dims"] }, noop)
      .task("extract", noop)
      .task("dims", noop)
      .task("report", { upstream: ["load"] }, noop)
      .build();
    assert.deepEqual(dag.taskIds, ["extract", "dims", "load", "report"]);
    assert.deepEqual([...dag.allDownstream("extract")].sort(), ["load", "report"]);
  });
});

describe("DagRegistry", () => {
  const one = () => defineDag({ id: "same" }).task("a", noop).build();

  it("rejects two DAGs with one id", () => {
    assert.throws(() => new DagRegistry([one(), one()]), /DAG 'same': two DAGs have this id/);
  });

  it("rejects a waiting trigger that names an unknown DAG", () => {
    const parent = defineDag({ id: "parent" }).waitingTrigger("wait", { triggerDagId: "ghost" }).build();
    assert.throws(() => new DagRegistry([parent]), /DAG 'parent' task 'wait': waits for DAG 'ghost', which is not loaded/);
  });

  it("rejects waiting triggers that loop between DAGs", () => {
    const a = defineDag({ id: "a" }).waitingTrigger("wait_b", { triggerDagId: "b" }).build();
    const b = defineDag({ id: "b" }).waitingTrigger("wait_a", { triggerDagId: "a" }).build();
    assert.throws(() => new DagRegistry([a, b]), /waiting triggers form a loop: (a -> b -> a|b -> a -> b)/);
  });

  it("lists and finds DAGs; an unknown id is DagNotFoundError", () => {
    const registry = new DagRegistry([one()]);
    assert.deepEqual(registry.list().map((d) => d.id), ["same"]);
    assert.throws(() => registry.get("nope"), { name: "DagNotFoundError" });
  });
});

describe("params, backoff and branches", () => {
  const dag = defineDag({
    id: "typed",
    params: z.object({ target: z.object({ days: z.number().int().min(1) }), label: z.string().default("x") }),
  })
    .task("a", { retries: 5, retryDelayMs: 100, maxRetryDelayMs: 1000 }, (ctx) => {
      // typed conf: this line would not compile if conf were untyped
      const days: number = ctx.conf.target.days;
      void days;
    })
    .task("b", { upstream: ["a"] }, noop)
    .task("c", { upstream: ["a"] }, noop)
    .task("d", { upstream: ["b"] }, noop)
    .build();

  it("validates conf and names the field path", () => {
    assert.deepEqual(dag.parseConf({ target: { days: 3 } }), { target: { days: 3 }, label: "x" });
    try {
      dag.parseConf({ target: { days: 0 } });
      assert.fail("expected ConfValidationError");
    } catch (err) {
      assert.ok(err instanceof ConfValidationError);
      assert.equal(err.field, "target.days");
      assert.match(err.message, /conf for DAG 'typed' is invalid at 'target.days'/);
    }
    assert.throws(() => dag.parseConf({}), (err: unknown) => err instanceof ConfValidationError && err.field === "target");
  });

  it("doubles the retry delay per failed try, up to the cap", () => {
    assert.deepEqual([1, 2, 3, 4, 5].map((t) => dag.retryDelayMs("a", t, () => 0)), [100, 200, 400, 800, 1000]);
  });

  it("turns branch results into the tasks to skip, and rejects tasks that are not downstream", () => {
    assert.deepEqual(dag.tasksToSkip("a", { follow: ["b"] }), ["c"]);
    assert.deepEqual(dag.tasksToSkip("a", { skip: ["d"] }), ["d"]);
    assert.deepEqual(new Set(dag.tasksToSkip("a", { shortCircuit: true })), new Set(["b", "c", "d"]));
    assert.throws(() => dag.tasksToSkip("a", { follow: ["d"] }), /follows d, not directly downstream/);
    assert.throws(() => dag.tasksToSkip("b", { skip: ["c"] }), /skips c, not downstream/);
  });
});

describe("schedule instants (no catch-up)", () => {
  const at = (iso: string) => new Date(iso);

  it("an interval is due at once the first time, then every N seconds, never twice for a gap", () => {
    const every = { everySeconds: 60 };
    assert.deepEqual(dueInstant(every, null, at("2026-01-01T00:00:00Z")), at("2026-01-01T00:00:00Z"));
    assert.equal(dueInstant(every, at("2026-01-01T00:00:00Z"), at("2026-01-01T00:00:59Z")), null);
    // ten minutes missed: one run, for now
    assert.deepEqual(dueInstant(every, at("2026-01-01T00:00:00Z"), at("2026-01-01T00:10:30Z")), at("2026-01-01T00:10:30Z"));
  });

  it("a cron schedule is due for its latest instant only", () => {
    assert.deepEqual(dueInstant("*/5 * * * *", at("2026-01-01T00:00:00Z"), at("2026-01-01T00:17:00Z")), at("2026-01-01T00:15:00Z"));
    assert.equal(dueInstant("*/5 * * * *", at("2026-01-01T00:15:00Z"), at("2026-01-01T00:19:59Z")), null);
    assert.equal(dueInstant(null, null, at("2026-01-01T00:00:00Z")), null);
  });
});
