// Airflow's list filters and sort keys on runs and task instances, against a list built for them:
// 36 runs over three DAGs with known states, dates, durations, conf and triggering users
// (testkit/runner/run-list-seed.ts, shared with the official client's breadth test). Every answer is
// compared with the same filter and sort computed here over the rows as the database holds them
// (the model's helpers, testkit/runner/run-list-model.ts), so a filter that is ignored, a sort key
// dropped or a page miscounted fails.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";
import { compare, duration, runKey, sorted, taskInstanceKey, user } from "../../testkit/runner/run-list-model.ts";
import { HOUR, RUN_LIST_DAGS, RUN_STATES_SEEDED, T0, micro, readRunList, seedRunList, type RunRow, type TaskInstanceRow } from "../../testkit/runner/run-list-seed.ts";

type Page = { dag_runs: DagRunResponse[]; total_entries: number };
type TiPage = { task_instances: TaskInstanceResponse[]; total_entries: number };

void describe("run and task instance lists: Airflow's filters and sort keys", () => {
  let api: ApiHarness;
  let rows: RunRow[] = [];
  let tis: TaskInstanceRow[] = [];
  let beforeDates = new Date();
  const engine = useTestRunner(RUN_LIST_DAGS, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner);
    beforeDates = (await seedRunList(engine.runner, engine.db)).updatedBefore;
    ({ runs: rows, taskInstances: tis } = await readRunList(engine.db));
    assert.equal(rows.length, 36);
    assert.deepEqual([...new Set(rows.map((r) => r.state))].sort(), [...RUN_STATES_SEEDED].sort());
  });

  async function runs(path: string): Promise<Page> {
    const res = await call<Page>(api.baseUrl, "GET", path);
    assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 400)}`);
    return res.body;
  }

  const ids = (page: Page) => page.dag_runs.map((r) => `${r.dag_id}/${r.dag_run_id}`);
  const keyOf = runKey;

  void it("~ lists every DAG's runs, sorted by two keys and then the run's id", async () => {
    const page = await runs("/api/v2/dags/~/dagRuns?order_by=dag_id&order_by=-start_date&limit=100");
    const expected = sorted(rows, [[(r) => r.dag_id, false], [(r) => r.start_date, true]]);
    assert.deepEqual(ids(page), expected.map(keyOf));
    assert.equal(page.total_entries, 36);
  });

  void it("states, a run_after range, a duration bound and a DAG id pattern with | together", async () => {
    const after = new Date(T0 + 40 * 60_000);
    const page = await runs(`/api/v2/dags/~/dagRuns?state=success&state=failed&run_after_gte=${after.toISOString()}&duration_lt=150&dag_id_pattern=_A|c&order_by=-duration&order_by=run_id`);
    const expected = sorted(
      rows.filter((r) => ["success", "failed"].includes(r.state) && r.queued_at >= micro(after) && (duration(r) ?? Infinity) < 150 && /_a|c/i.test(r.dag_id)),
      [[duration, true], [(r) => r.run_id, false]],
    );
    assert.ok(expected.length >= 3, `a meaningful selection (${expected.length})`);
    assert.deepEqual(ids(page), expected.map(keyOf));
  });

  void it("logical_date and end_date bounds, run_id prefix, triggering user pattern, conf_contains", async () => {
    const from = new Date(T0 + 3 * HOUR);
    const to = new Date(T0 + 30 * HOUR);
    const page = await runs(`/api/v2/dags/~/dagRuns?logical_date_gt=${from.toISOString()}&logical_date_lte=${to.toISOString()}&run_id_prefix_pattern=run_1|run_2&order_by=logical_date`);
    const expected = sorted(
      rows.filter((r) => r.logical_date !== null && r.logical_date > micro(from) && r.logical_date <= micro(to) && /^run_[12]/.test(r.run_id)),
      [[(r) => r.logical_date, false]],
    );
    assert.deepEqual(ids(page), expected.map(keyOf));

    const alice = await runs("/api/v2/dags/~/dagRuns?triggering_user_name_pattern=LIC&limit=100");
    assert.deepEqual(ids(alice).sort(), rows.filter((r) => user(r) === "alice").map(keyOf).sort());
    assert.ok(alice.dag_runs.every((r) => r.triggering_user_name === "alice"));
    const tagged = await runs("/api/v2/dags/list_b/dagRuns?conf_contains=t3&order_by=id");
    assert.deepEqual(ids(tagged), rows.filter((r) => r.dag_id === "list_b" && r.conf.includes("t3")).map(keyOf));
    const ended = await runs(`/api/v2/dags/~/dagRuns?end_date_lt=${new Date(T0 + 60 * 60_000).toISOString()}&limit=100&order_by=end_date`);
    assert.deepEqual(ids(ended), sorted(rows.filter((r) => r.end_date !== null && r.end_date < micro(T0 + HOUR)), [[(r) => r.end_date, false]]).map(keyOf));
  });

  void it("updated_at moves with every change; versions, partitions and bundle versions filter as Airflow's do", async () => {
    const changed = await runs(`/api/v2/dags/~/dagRuns?updated_at_gte=${beforeDates.toISOString()}&limit=1`);
    assert.equal(changed.total_entries, 36, "the SQL update above touched every run");
    assert.equal((await runs(`/api/v2/dags/~/dagRuns?updated_at_lt=${beforeDates.toISOString()}`)).total_entries, 0);
    assert.equal((await runs("/api/v2/dags/~/dagRuns?dag_version=1")).total_entries, 36);
    assert.equal((await runs("/api/v2/dags/~/dagRuns?dag_version=2")).total_entries, 0);
    for (const q of ["partition_key_pattern=x", "bundle_version=v1", "consuming_asset_pattern=a", "partition_date_gte=2026-01-01", "run_type=backfill"]) {
      assert.equal((await runs(`/api/v2/dags/~/dagRuns?${q}`)).total_entries, 0, q);
    }
    assert.equal((await runs("/api/v2/dags/~/dagRuns?run_type=manual&run_type=operator_triggered")).total_entries, 36);
  });

  void it("pages: total_entries on every page and past the last one", async () => {
    const all = sorted(rows, [[(r) => r.state, false]]);
    const page = await runs("/api/v2/dags/~/dagRuns?order_by=state&limit=7&offset=7");
    assert.deepEqual(ids(page), all.slice(7, 14).map(keyOf));
    assert.equal(page.total_entries, 36);
    const past = await runs("/api/v2/dags/~/dagRuns?order_by=state&limit=7&offset=500");
    assert.deepEqual([past.dag_runs.length, past.total_entries], [0, 36]);
  });

  void it("POST dagRuns/list takes Airflow's batch body; a bad order_by key, cursor or field is refused naming it", async () => {
    const res = await call<Page>(api.baseUrl, "POST", "/api/v2/dags/~/dagRuns/list", {
      headers: auth,
      body: { dag_ids: ["list_a", "list_c"], states: ["success", "failed"], start_date_gte: new Date(T0).toISOString(), order_by: "-duration, run_id", page_limit: 50 },
    });
    assert.equal(res.status, 200, res.text);
    const expected = sorted(rows.filter((r) => ["list_a", "list_c"].includes(r.dag_id) && ["success", "failed"].includes(r.state)), [[duration, true], [(r) => r.run_id, false]]);
    assert.deepEqual(ids(res.body), expected.map(keyOf));
    const one = await call<Page>(api.baseUrl, "POST", "/api/v2/dags/list_b/dagRuns/list", { headers: auth, body: { dag_ids: ["list_a", "list_b"] } });
    assert.ok(one.body.dag_runs.every((r) => r.dag_id === "list_b") && one.body.total_entries === 12, "the path's DAG bounds the body's");

    const refusals: [string, string, unknown, string][] = [
      ["POST", "/api/v2/dags/~/dagRuns/list", { order_by: "-colour" }, "order_by"],
      ["POST", "/api/v2/dags/~/dagRuns/list", { page_limit: 0 }, "page_limit"],
      ["POST", "/api/v2/dags/~/dagRuns/list", { states: ["sleeping"] }, "states"],
      ["GET", "/api/v2/dags/~/dagRuns?order_by=colour", undefined, "order_by"],
      ["GET", "/api/v2/dags/~/dagRuns?cursor=abc", undefined, "cursor"],
      ["GET", "/api/v2/dags/~/dagRuns?run_after_gte=yesterday", undefined, "run_after_gte"],
      ["GET", "/api/v2/dags/~/dagRuns?duration_gt=long", undefined, "duration_gt"],
      ["GET", "/api/v2/dags/~/dagRuns?colour=red", undefined, "colour"],
    ];
    for (const [method, path, body, field] of refusals) {
      const bad = await call<{ field?: string }>(api.baseUrl, method, path, { headers: auth, body });
      assert.equal(bad.status, 422, `${method} ${path}: ${bad.text.slice(0, 300)}`);
      assert.ok(bad.body.field === field || bad.body.field?.startsWith(`${field}.`), `${method} ${path} names ${field}: ${bad.body.field ?? "no field"}`);
    }
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags/no_such/dagRuns")).status, 404);
  });

  void it("task instances across runs (~/~): filters on state, try number, dates and patterns, several sort keys, and the batch body", async () => {
    const tiKey = (t: { dag_id: string; run_id?: string; dag_run_id?: string; task_id: string }) => taskInstanceKey({ ...t, run_id: t.run_id ?? t.dag_run_id ?? "" });
    const res = await call<TiPage>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances?state=success&state=failed&try_number=2&task_display_name_pattern=SEC|fir&order_by=-duration&order_by=id");
    assert.equal(res.status, 200, res.text);
    const expected = [...tis]
      .filter((t) => ["success", "failed"].includes(t.state) && t.try_number === 2)
      .sort((a, b) => compare(duration(a), duration(b), true) || a.id - b.id);
    assert.ok(expected.length >= 4);
    assert.deepEqual(res.body.task_instances.map(tiKey), expected.map(tiKey));
    assert.equal(res.body.total_entries, expected.length);

    const oneDag = await call<TiPage>(api.baseUrl, "GET", "/api/v2/dags/list_c/dagRuns/~/taskInstances?task_id=second&limit=100");
    assert.deepEqual(oneDag.body.task_instances.map(tiKey).sort(), tis.filter((t) => t.dag_id === "list_c" && t.task_id === "second").map(tiKey).sort());
    const run = await call<TiPage>(api.baseUrl, "GET", "/api/v2/dags/list_a/dagRuns/run_01/taskInstances");
    assert.deepEqual(run.body.task_instances.map((t) => t.task_id), ["first", "second"], "one run, in the DAG's order");
    for (const q of ["pool=default_pool", "queue=default", "map_index=-1", "pool_name_pattern=DEFAULT"]) {
      assert.equal((await call<TiPage>(api.baseUrl, "GET", `/api/v2/dags/~/dagRuns/~/taskInstances?${q}&limit=1`)).body.total_entries, 72, q);
    }
    for (const q of ["pool=etl", "executor=CeleryExecutor", "operator=PythonOperator", "map_index=0", "task_group_id=g"]) {
      assert.equal((await call<TiPage>(api.baseUrl, "GET", `/api/v2/dags/~/dagRuns/~/taskInstances?${q}`)).body.total_entries, 0, q);
    }
    const batch = await call<TiPage>(api.baseUrl, "POST", "/api/v2/dags/~/dagRuns/~/taskInstances/list", {
      headers: auth,
      body: { dag_ids: ["list_a"], task_ids: ["second"], state: ["failed"], order_by: "-start_date", page_limit: 100 },
    });
    assert.equal(batch.status, 200, batch.text);
    assert.deepEqual(
      batch.body.task_instances.map(tiKey),
      tis.filter((t) => t.dag_id === "list_a" && t.task_id === "second" && t.state === "failed").sort((a, b) => compare(a.start_date, b.start_date, true) || b.id - a.id).map(tiKey),
    );
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags/list_a/dagRuns/nope/taskInstances")).status, 404);
  });
});
