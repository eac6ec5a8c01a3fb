// Two runners on one metadata database, each its own engine: its own connection pool, graphile
// workers and scheduler, as two processes or two hosts have (test/pool/second-host-runner.test.ts
// runs two processes for the faults). What Postgres must decide once for the whole pool:
//   - a schedule fires once per instant: a cron DAG (every second) and an interval DAG (every
//     second), both schedulers ticking every 100 ms;
//   - max_active_runs 1 holds across the two: runs triggered on both never overlap;
//   - an exclusive resource holds across the two: two DAGs that name it never run at once.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import type { Runner } from "../../src/runner/runner.ts";
import { createTestDatabase, sleep, startRunner, type TestDatabase } from "../../testkit/runner/runner-db.ts";

interface Span {
  dag: string;
  runId: string;
  start: number;
  end: number;
}
const spans: Span[] = [];
const work = (dag: string) => async (ctx: { runId: string }): Promise<void> => {
  const start = performance.now();
  await sleep(30); // long enough that two runs let through at once would overlap
  spans.push({ dag, runId: ctx.runId, start, end: performance.now() });
};

const dags = [
  defineDag({ id: "every_second_cron", schedule: "* * * * * *", isPausedUponCreation: true }).task("tick", () => undefined).build(),
  defineDag({ id: "every_second_interval", schedule: { everySeconds: 1 }, isPausedUponCreation: true }).task("tick", () => undefined).build(),
  defineDag({ id: "one_at_a_time", maxActiveRuns: 1 }).task("work", work("one_at_a_time")).build(),
  defineDag({ id: "holds_res_a", maxActiveRuns: 16, exclusive: ["res"] }).task("work", work("holds_res_a")).build(),
  defineDag({ id: "holds_res_b", maxActiveRuns: 16, exclusive: ["res"] }).task("work", work("holds_res_b")).build(),
];

function overlaps(list: readonly Span[]): string[] {
  const sorted = [...list].sort((a, b) => a.start - b.start);
  const found: string[] = [];
  for (let i = 1; i < sorted.length; i++) {
    const [prev, next] = [sorted[i - 1], sorted[i]];
    if (prev && next && next.start < prev.end) found.push(`${prev.dag}/${prev.runId} and ${next.dag}/${next.runId}`);
  }
  return found;
}

async function waitAll(engines: readonly Runner[], runs: readonly { dag: string; runId: string }[]): Promise<void> {
  for (const [i, run] of runs.entries()) {
    const done = await engines[i % engines.length]!.waitForRun(run.dag, run.runId, { timeoutMs: 60_000 });
    assert.equal(done.state, "success", `${run.dag}/${run.runId} ended ${done.state}`);
  }
}

describe("a pool of two runner engines on one database", () => {
  let db: TestDatabase | undefined;
  let engines: Runner[] = [];
  before(async () => {
    db = await createTestDatabase();
    const started = db;
    // one at a time: the second finds the migrations applied
    for (let i = 0; i < 2; i++) engines.push(await startRunner(started, dags, { schedulerIntervalMs: 100 }));
  });
  after(async () => {
    for (const engine of engines) await engine.stop();
    engines = [];
    await db?.drop();
  });

  it("a schedule fires once per instant across the pool: a cron DAG and an interval DAG, both schedulers ticking", async () => {
    const [a, b] = engines;
    assert.ok(a && b);
    await a.setPaused("every_second_cron", false);
    await b.setPaused("every_second_interval", false);
    await sleep(5500);
    await a.setPaused("every_second_cron", true);
    await b.setPaused("every_second_interval", true);
    const cron = (await a.listRuns("every_second_cron", { limit: 100, offset: 0 })).items.map((r) => r.logicalDate?.getTime() ?? 0).sort((x, y) => x - y);
    const interval = (await b.listRuns("every_second_interval", { limit: 100, offset: 0 })).items.map((r) => r.logicalDate?.getTime() ?? 0).sort((x, y) => x - y);
    assert.ok(cron.length >= 4, `the cron DAG ran about once a second for 5.5 s: ${cron.length} runs`);
    assert.equal(new Set(cron).size, cron.length, "no cron instant twice");
    assert.ok(cron.every((t) => t % 1000 === 0), "each on a whole second");
    assert.ok(interval.length >= 4, `the interval DAG ran about once a second for 5.5 s: ${interval.length} runs`);
    const gaps = interval.slice(1).map((t, i) => t - (interval[i] ?? 0));
    assert.ok(gaps.every((g) => g >= 1000), `interval runs at least 1 s apart whichever runner's scheduler led the tick: gaps ${gaps.join(", ")} ms`);
  });

  it("max_active_runs 1 holds across the pool: runs triggered on both runners never overlap", async () => {
    const runs = [];
    for (let i = 0; i < 8; i++) {
      const engine = engines[i % 2]!;
      runs.push({ dag: "one_at_a_time", runId: (await engine.triggerRun("one_at_a_time", { triggeredBy: `runner ${(i % 2) + 1}` })).runId });
    }
    await waitAll(engines, runs);
    const mine = spans.filter((s) => s.dag === "one_at_a_time");
    assert.equal(mine.length, 8);
    assert.deepEqual(overlaps(mine), []);
  });

  it("an exclusive resource holds across the pool: two DAGs that name it never run at once, whichever runner started them", async () => {
    const runs = [];
    for (let i = 0; i < 12; i++) {
      const dag = i % 3 === 0 ? "holds_res_b" : "holds_res_a";
      runs.push({ dag, runId: (await engines[i % 2]!.triggerRun(dag, { triggeredBy: `runner ${(i % 2) + 1}` })).runId });
    }
    await waitAll(engines, runs);
    const mine = spans.filter((s) => s.dag.startsWith("holds_res"));
    assert.equal(mine.length, 12);
    assert.deepEqual(overlaps(mine), [], "no two holders of res at once");
  });
});
