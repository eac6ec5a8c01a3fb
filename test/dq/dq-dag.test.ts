// dq_check as a DAG, on the test stand's world built by the DAGs themselves through the runner's
// REST API (never the user's stand): world_recreate's etl_pipeline ends with a green dq_check, and
// dm.purchase_vs_orders holds on every closed day exactly the classes the generator planted (day 0
// at position 8, days 0 and 1 after a world_next_day); then a corrupted mart row makes dq_check,
// triggered alone as `make dq` does, red at that mart's check task, which names the row in its log,
// with the red result published in dm.dq_summary_v; the row put back, dq_check is green again.
// Holds the world lock.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { DQ_CHECKS, MISMATCH_CLASSES } from "../../tasks/dq.ts";
import { api, describeRun, readPositionText, runDag, stateOf, taskInstances, taskLog, withClickHouse } from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { rewriteDailyRevenue } from "../../testkit/world/mart-corruption.ts";

const enc = encodeURIComponent;
const world = useWorldSuite();

async function newestRun(dagId: string): Promise<DagRunResponse> {
  const page = await api.request<{ dag_runs: DagRunResponse[] }>("GET", `api/v2/dags/${enc(dagId)}/dagRuns`, { query: { limit: 1, order_by: "-id" } });
  const [run] = page.dag_runs;
  assert.ok(run, `${dagId} has a run`);
  return run;
}

async function expectDqGreenRun(): Promise<void> {
  const run = await newestRun("dq_check");
  assert.equal(run.state, "success", `the newest dq_check run ${run.dag_run_id}`);
  const tasks = await taskInstances("dq_check", run.dag_run_id);
  assert.deepEqual([...tasks.keys()].sort(), ["measure", ...DQ_CHECKS.map((c) => `check_${c}`)].sort());
  for (const [id, ti] of tasks) assert.equal(ti.state, "success", id);
}

/** Mart class counts against the passport on the closed days of `position` (snapshots 0 … position-2). */
async function expectPlantedClasses(position: number): Promise<void> {
  const closed = position - world.passport.order_window_days;
  const rows = await withClickHouse((ch) =>
    ch.query<{ d: string; c: string; n: string }>("SELECT toString(order_day) AS d, mismatch_class AS c, toString(count()) AS n FROM dm.purchase_vs_orders_v GROUP BY d, c"),
  );
  for (let day = 0; day < closed; day++) {
    const planted = world.passport.order_classes.days[day];
    assert.ok(planted);
    const actual = Object.fromEntries(MISMATCH_CLASSES.map((c) => [c, Number(rows.find((r) => r.d === planted.date && r.c === c)?.n ?? 0)]));
    const expected = Object.fromEntries(MISMATCH_CLASSES.map((c) => [c, c === "awaiting_order" ? 0 : planted.classes[c]]));
    console.log(`position ${position}, closed day ${day} (${planted.date}): ${JSON.stringify(actual)}`);
    assert.deepEqual(actual, expected, `classes of closed day ${planted.date}`);
  }
}

describe("dq_check on a world built by the DAGs (test stand)", () => {
  it("world_recreate: etl_pipeline ends with a green dq_check; closed day 0 holds the planted classes", async () => {
    const recreated = await runDag("world_recreate", {}, 900);
    assert.equal(recreated.run.state, "success", describeRun(recreated));
    assert.equal(await readPositionText(), String(world.passport.WORLD_STARTING_DAYS));
    const pipeline = await newestRun("etl_pipeline");
    assert.equal(pipeline.state, "success");
    assert.equal(stateOf({ ...recreated, run: pipeline, tasks: await taskInstances("etl_pipeline", pipeline.dag_run_id) }, "dq_check"), "success");
    await expectDqGreenRun();
    await expectPlantedClasses(world.passport.WORLD_STARTING_DAYS);
  });

  it("world_next_day closes day 1: days 0 and 1 hold the planted classes, dq_check green", async () => {
    const step = await runDag("world_next_day", { days: 1 }, 900);
    assert.equal(step.run.state, "success", describeRun(step));
    await expectDqGreenRun();
    await expectPlantedClasses(world.passport.WORLD_STARTING_DAYS + 1);
  });

  it("a corrupted dm.daily_revenue row: dq_check alone is red at check_mart_daily_revenue, names the row and publishes the red result; green once it is put back", async () => {
    const rewrite = (delta: string, loadId: string): Promise<void> => rewriteDailyRevenue(world.passport.start_date, delta, loadId);
    await rewrite("100", "dq-dag-corrupt");
    const red = await runDag("dq_check", {}, 600);
    assert.equal(red.run.state, "failed", describeRun(red));
    assert.equal(stateOf(red, "measure"), "success");
    assert.equal(stateOf(red, "check_mart_daily_revenue"), "failed");
    const ti = red.tasks.get("check_mart_daily_revenue");
    assert.match(ti?.error ?? "", /dq check mart_daily_revenue failed: 1 failed row\(s\) on 1 day\(s\) \[2026-06-01\]/);
    const log = await taskLog("dq_check", red.run.dag_run_id, "check_mart_daily_revenue");
    assert.match(log, /2026-06-01 \S+: DDS orders\/units\/revenue\/aov \d+\/\d+\/[\d.]+\/[\d.]+, mart \d+\/\d+\/[\d.]+\/[\d.]+/);
    const published = await withClickHouse((ch) =>
      ch.query<{ check_name: string; status: string }>(`SELECT check_name, status FROM dm.dq_summary_v WHERE run_id = '${red.run.dag_run_id}' AND status = 'fail'`),
    );
    assert.deepEqual(published, [{ check_name: "mart_daily_revenue", status: "fail" }]);

    await rewrite("-100", "dq-dag-restore");
    const green = await runDag("dq_check", {}, 600);
    assert.equal(green.run.state, "success", describeRun(green));
  });
});
