// Airflow's list filters and sort keys on runs and task instances, against a list built for them:
// 36 runs over three DAGs with known states, dates, durations, conf and triggering users (written
// through the engine, then given their dates in SQL). Every answer is compared with the same
// filter and sort computed here over the rows as the database holds them, so a filter that is
// ignored, a sort key dropped or a page miscounted fails.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import { defineDag } from "../../src/runner/index.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { useTestRunner, withClient } from "../../testkit/runner/runner-db.ts";

const DAGS = ["list_a", "list_b", "list_c"].map((id) =>
  defineDag({ id, description: "a run list", fileloc: "test/api/run-lists.test.ts" })
    .task("first", () => undefined)
    .task("second", { upstream: ["first"] }, () => undefined)
    .build(),
);
const STATES = ["success", "failed", "running", "queued"] as const;
const USERS = ["alice", "bob", null] as const;
const T0 = Date.parse("2026-03-01T00:00:00Z");
const HOUR = 3_600_000;

interface Row {
  id: number;
  dag_id: string;
  run_id: string;
  state: string;
  queued_at: Date;
  logical_date: Date | null;
  start_date: Date | null;
  end_date: Date | null;
  updated_at: Date;
  triggered_by: string;
  conf: string;
}

type Page = { dag_runs: DagRunResponse[]; total_entries: number };
type TiPage = { task_instances: TaskInstanceResponse[]; total_entries: number };

/** Postgres's order: nulls last ascending, first descending. */
function compare(a: number | string | null, b: number | string | null, descending: boolean): number {
  if (a === b) return 0;
  if (a === null) return descending ? -1 : 1;
  if (b === null) return descending ? 1 : -1;
  const c = a < b ? -1 : 1;
  return descending ? -c : c;
}

const time = (d: Date | null): number | null => (d === null ? null : d.getTime());
const duration = (r: Row): number | null => (r.start_date && r.end_date ? (r.end_date.getTime() - r.start_date.getTime()) / 1000 : null);
const user = (r: Row): string | null => /^rest_api:user:(.+)$/.exec(r.triggered_by)?.[1] ?? null;

function sorted(rows: readonly Row[], keys: readonly [(r: Row) => number | string | null, boolean][]): Row[] {
  const last = keys[keys.length - 1]?.[1] ?? false;
  return [...rows].sort((a, b) => {
    for (const [key, descending] of keys) {
      const c = compare(key(a), key(b), descending);
      if (c !== 0) return c;
    }
    return compare(a.id, b.id, last);
  });
}

void describe("run and task instance lists: Airflow's filters and sort keys", () => {
  let api: ApiHarness;
  let rows: Row[] = [];
  let beforeDates = new Date();
  const engine = useTestRunner(DAGS, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner);
    for (const dag of DAGS) await engine.runner.setPaused(dag.id, true);
    let i = 0;
    for (const dag of DAGS) {
      for (let k = 0; k < 12; k += 1, i += 1) {
        const who = USERS[i % USERS.length] ?? null;
        await engine.runner.triggerRun(dag.id, {
          runId: `run_${String(i).padStart(2, "0")}`,
          logicalDate: i % 5 === 0 ? null : new Date(T0 + i * HOUR),
          conf: { tag: `t${i % 4}`, n: i },
          triggeredBy: who === null ? "scheduler" : `rest_api:user:${who}`,
        });
      }
    }
    beforeDates = new Date();
    // states and dates as a list to filter: queued ones never started, running ones have no end
    await withClient(engine.db, async (client) => {
      await client.query(`
        update runner.dag_runs r set
          state = (array['success','failed','running','queued'])[1 + (x.n % 4)],
          queued_at = $1::timestamptz + make_interval(mins => x.n * 7),
          start_date = case when x.n % 4 = 3 then null else $1::timestamptz + make_interval(mins => x.n * 7 + 1) end,
          end_date = case when x.n % 4 in (2, 3) then null else $1::timestamptz + make_interval(mins => x.n * 7 + 1, secs => (x.n * 37) % 300) end
        from (select id, (conf ->> 'n')::integer as n from runner.dag_runs) x where x.id = r.id`, [new Date(T0).toISOString()]);
      await client.query(`
        update runner.task_instances ti set
          state = case when r.state = 'queued' then 'scheduled' when ti.task_id = 'first' then 'success' else r.state end,
          try_number = case when r.state = 'queued' then 0 else 1 + (r.id % 2) end,
          start_date = r.start_date, end_date = case when r.end_date is null then null else r.end_date - interval '1 second' * (ti.id % 3) end
        from runner.dag_runs r where r.id = ti.run_pk`);
      rows = (await client.query<Row>("select id::integer as id, dag_id, run_id, state, queued_at, logical_date, start_date, end_date, updated_at, triggered_by, conf::text as conf from runner.dag_runs order by id")).rows;
    });
    assert.equal(rows.length, 36);
    assert.deepEqual([...new Set(rows.map((r) => r.state))].sort(), [...STATES].sort());
  });

  async function runs(path: string): Promise<Page> {
    const res = await call<Page>(api.baseUrl, "GET", path);
    assert.equal(res.status, 200, `${path}: ${res.text.slice(0, 400)}`);
    return res.body;
  }

  const ids = (page: Page) => page.dag_runs.map((r) => `${r.dag_id}/${r.dag_run_id}`);
  const keyOf = (r: Row) => `${r.dag_id}/${r.run_id}`;

  void it("~ lists every DAG's runs, sorted by two keys and then the run's id", async () => {
    const page = await runs("/api/v2/dags/~/dagRuns?order_by=dag_id&order_by=-start_date&limit=100");
    const expected = sorted(rows, [[(r) => r.dag_id, false], [(r) => time(r.start_date), true]]);
    assert.deepEqual(ids(page), expected.map(keyOf));
    assert.equal(page.total_entries, 36);
  });

  void it("states, a run_after range, a duration bound and a DAG id pattern with | together", async () => {
    const after = new Date(T0 + 40 * 60_000);
    const page = await runs(`/api/v2/dags/~/dagRuns?state=success&state=failed&run_after_gte=${after.toISOString()}&duration_lt=150&dag_id_pattern=_A|c&order_by=-duration&order_by=run_id`);
    const expected = sorted(
      rows.filter((r) => ["success", "failed"].includes(r.state) && r.queued_at >= after && (duration(r) ?? Infinity) < 150 && /_a|c/i.test(r.dag_id)),
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
      rows.filter((r) => r.logical_date !== null && r.logical_date > from && r.logical_date <= to && /^run_[12]/.test(r.run_id)),
      [[(r) => time(r.logical_date), false]],
    );
    assert.deepEqual(ids(page), expected.map(keyOf));

    const alice = await runs("/api/v2/dags/~/dagRuns?triggering_user_name_pattern=LIC&limit=100");
    assert.deepEqual(ids(alice).sort(), rows.filter((r) => user(r) === "alice").map(keyOf).sort());
    assert.ok(alice.dag_runs.every((r) => r.triggering_user_name === "alice"));
    const tagged = await runs("/api/v2/dags/list_b/dagRuns?conf_contains=t3&order_by=id");
    assert.deepEqual(ids(tagged), rows.filter((r) => r.dag_id === "list_b" && r.conf.includes("t3")).map(keyOf));
    const ended = await runs(`/api/v2/dags/~/dagRuns?end_date_lt=${new Date(T0 + 60 * 60_000).toISOString()}&limit=100&order_by=end_date`);
    assert.deepEqual(ids(ended), sorted(rows.filter((r) => r.end_date !== null && r.end_date < new Date(T0 + HOUR)), [[(r) => time(r.end_date), false]]).map(keyOf));
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
    const tis = await withClient(engine.db, async (client) =>
      (await client.query<{ id: number; dag_id: string; run_id: string; task_id: string; state: string; try_number: number; start_date: Date | null; end_date: Date | null }>(
        "select ti.id::integer as id, r.dag_id, r.run_id, ti.task_id, ti.state, ti.try_number, ti.start_date, ti.end_date from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk",
      )).rows,
    );
    const tiKey = (t: { dag_id: string; run_id?: string; dag_run_id?: string; task_id: string }) => `${t.dag_id}/${t.run_id ?? t.dag_run_id}/${t.task_id}`;
    const tiDuration = (t: (typeof tis)[number]) => (t.start_date && t.end_date ? (t.end_date.getTime() - t.start_date.getTime()) / 1000 : null);
    const res = await call<TiPage>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances?state=success&state=failed&try_number=2&task_display_name_pattern=SEC|fir&order_by=-duration&order_by=id");
    assert.equal(res.status, 200, res.text);
    const expected = [...tis]
      .filter((t) => ["success", "failed"].includes(t.state) && t.try_number === 2)
      .sort((a, b) => compare(tiDuration(a), tiDuration(b), true) || a.id - b.id);
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
      tis.filter((t) => t.dag_id === "list_a" && t.task_id === "second" && t.state === "failed").sort((a, b) => compare(time(a.start_date), time(b.start_date), true) || b.id - a.id).map(tiKey),
    );
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags/list_a/dagRuns/nope/taskInstances")).status, 404);
  });
});
