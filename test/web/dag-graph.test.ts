// The task graph's layout and drawing (src/web/dag-graph.ts), without a server: a task one column
// right of its deepest upstream, a fan-out in declaration order, an edge per dependency with an
// arrow, each node's retries and timeout, a waiting trigger linking the DAG it starts, states as
// classes, and every text escaped.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DagTaskRecord } from "../../src/runner/index.ts";
import { layoutGraph, renderDagGraph, taskFacts } from "../../src/web/dag-graph.ts";

function task(taskId: string, upstream: string[] = [], extra: Partial<DagTaskRecord> = {}): DagTaskRecord {
  return { taskId, kind: "callable", description: "", upstream, downstream: [], retries: 0, retryDelayMs: 0, executionTimeoutMs: null, triggerDagId: null, ...extra };
}

const at = (nodes: ReturnType<typeof layoutGraph>) => Object.fromEntries(nodes.map((n) => [n.task.taskId, [n.column, n.row]]));

void describe("the task graph (Graph view)", () => {
  void it("puts a task one column right of its deepest upstream, and fans out in declaration order", () => {
    // extract → (clean, count) → load; audit depends on extract and load (deepest: load)
    const nodes = layoutGraph([task("extract"), task("clean", ["extract"]), task("count", ["extract"]), task("load", ["clean", "count"]), task("audit", ["extract", "load"])]);
    assert.deepEqual(at(nodes), { extract: [0, 0], clean: [1, 0], count: [1, 1], load: [2, 0], audit: [3, 0] });
  });

  void it("orders a column by its tasks' upstream rows, so two chains stay straight", () => {
    const nodes = layoutGraph([task("a1"), task("b1"), task("b2", ["b1"]), task("a2", ["a1"])]);
    assert.deepEqual(at(nodes), { a1: [0, 0], b1: [0, 1], a2: [1, 0], b2: [1, 1] });
  });

  void it("draws an edge with an arrow per dependency, and a node per task with its retries and timeout", () => {
    const svg = renderDagGraph({
      id: "etl",
      tasks: [task("extract", [], { retries: 2, retryDelayMs: 30_000, executionTimeoutMs: 300_000 }), task("load", ["extract"])],
      dagHref: (id) => `/ui/dags/${id}`,
    }).text;
    assert.equal((svg.match(/<path class="graph-edge"/g) ?? []).length, 1);
    assert.match(svg, /marker-end="url\(#arrow-etl\)" data-edge="extract→load"/);
    assert.match(svg, /<marker id="arrow-etl"/);
    assert.match(svg, /<g class="graph-task kind-callable" data-task="extract" data-retries="2" data-timeout-ms="300000">/);
    assert.match(svg, />retries 2 \(every 30\.0 s\)</);
    assert.match(svg, />timeout 5 min 0 s</);
    assert.match(svg, />no retries</);
    assert.match(svg, />no timeout</);
    assert.equal(taskFacts(task("x", [], { retries: 1, retryDelayMs: 500 })), "retries 1 (every 500 ms) · no timeout");
  });

  void it("links a waiting trigger to the DAG it starts, and colours a run's states", () => {
    const svg = renderDagGraph({
      id: "parent",
      tasks: [task("prepare"), task("start_child", ["prepare"], { kind: "waitingTrigger", triggerDagId: "child_dag" })],
      states: new Map([["prepare", "success"], ["start_child", "deferred"]]),
      taskHref: (id) => `/ui/dags/parent/runs/r1?task=${id}`,
      dagHref: (id) => `/ui/dags/${id}`,
    }).text;
    assert.match(svg, /<a class="graph-trigger" href="\/ui\/dags\/child_dag" data-triggers="child_dag">/);
    assert.match(svg, /starts ▸ child_dag/);
    assert.match(svg, /class="graph-state state-success" data-graph-task="prepare"/);
    assert.match(svg, /class="graph-state state-deferred" data-graph-task="start_child"/);
    assert.match(svg, /<a href="\/ui\/dags\/parent\/runs\/r1\?task=prepare">/);
  });

  void it("escapes what a DAG file wrote (descriptions, ids) and keeps the marker id safe", () => {
    const svg = renderDagGraph({ id: 'x"><script>', tasks: [task("t", [], { description: "</title><script>alert(1)</script>" })], dagHref: (id) => id }).text;
    assert.ok(!svg.includes("<script>"), svg);
    assert.match(svg, /&lt;\/title&gt;&lt;script&gt;alert\(1\)/);
    assert.match(svg, /<marker id="arrow-x___script_"/);
  });

  void it("says so for a version without tasks instead of drawing an empty box", () => {
    assert.match(renderDagGraph({ id: "empty", tasks: [], dagHref: (id) => id }).text, /declares no tasks/);
  });
});
