// The DAG list with Airflow's filters and sort keys (several, '-' for descending, the latest run's
// state and start), PATCH /dags over a selection, DELETE /dags/{id}, the runner processes as jobs,
// and the configuration: 403 unless exposed, then by section with every secret masked.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { taskHolds, testDags } from "../../testkit/runner/api-dags.ts";
import { defineDag } from "../../src/runner/index.ts";
import { useTestRunner, waitForTaskState } from "../../testkit/runner/runner-db.ts";

type Dags = { dags: { dag_id: string; is_paused: boolean }[]; total_entries: number };
type Jobs = { jobs: { id: number; state: string; job_type: string; hostname: string; end_date: string | null }[]; total_entries: number };
type Config = { sections: { name: string; options: { key: string; value: string }[] }[] };

void describe("DAG list, DAG changes, jobs and config", () => {
  let api: ApiHarness;
  let exposed: ApiHarness;
  const engine = useTestRunner(testDags, { beforeStop: async () => { await api?.close(); await exposed?.close(); } });
  const ids = async (query: string) => {
    const res = await call<Dags>(api.baseUrl, "GET", `/api/v2/dags${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body.dags.map((d) => d.dag_id);
  };
  const trigger = async (dagId: string, conf: Record<string, unknown> = {}) => {
    const res = await call<DagRunResponse>(api.baseUrl, "POST", `/api/v2/dags/${dagId}/dagRuns`, { headers: auth, body: { logical_date: null, conf } });
    assert.equal(res.status, 200, res.text);
    return res.body.dag_run_id;
  };

  before(async () => {
    api = await startApi(engine.runner);
    exposed = await startApi(engine.runner, undefined, { exposeConfig: "non-sensitive-only" });
    const ok = await trigger("api_ok");
    await engine.runner.waitForRun("api_ok", ok, { timeoutMs: 20_000 });
    const fail = await trigger("api_fail");
    await engine.runner.waitForRun("api_fail", fail, { timeoutMs: 20_000 });
  });

  void it("filters and sorts the DAG list as Airflow's", async () => {
    assert.deepEqual(await ids(""), ["api_fail", "api_ok", "api_slow"]);
    assert.deepEqual(await ids("?order_by=-dag_id"), ["api_slow", "api_ok", "api_fail"]);
    assert.deepEqual(await ids("?last_dag_run_state=failed"), ["api_fail"]);
    assert.deepEqual(await ids("?dag_run_state=success&dag_run_state=failed"), ["api_fail", "api_ok"]);
    assert.deepEqual(await ids("?dag_run_start_date_gte=2999-01-01T00:00:00Z"), []);
    assert.deepEqual(await ids("?order_by=last_run_state&order_by=-dag_id"), ["api_fail", "api_ok", "api_slow"], "failed < success, the DAG with no run last");
    assert.deepEqual(await ids("?order_by=-start_date"), ["api_slow", "api_fail", "api_ok"], "descending: no run first, then the latest start");
    assert.deepEqual(await ids("?dag_id_prefix_pattern=api_s|api_f"), ["api_fail", "api_slow"]);
    assert.deepEqual(await ids("?dag_display_name_pattern=OK"), ["api_ok"]);
    assert.deepEqual(await ids("?has_import_errors=false&timetable_type=NullTimetable"), ["api_fail", "api_ok", "api_slow"]);
    assert.deepEqual(await ids("?timetable_type=CronTriggerTimetable"), []);
    assert.deepEqual(await ids("?tags=nightly"), [], "no DAG has tags here");
    assert.deepEqual(await ids("?limit=1&offset=1"), ["api_ok"]);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags?order_by=owner")).status, 422);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags?last_dag_run_state=green")).status, 422);
  });

  void it("pauses every DAG a selection names, and asks for the selection", async () => {
    const refused = await call(api.baseUrl, "PATCH", "/api/v2/dags", { headers: auth, body: { is_paused: true } });
    assert.equal(refused.status, 400, refused.text);
    assert.equal((await call(api.baseUrl, "PATCH", "/api/v2/dags?dag_id_pattern=~", { body: { is_paused: true } })).status, 401);
    const paused = await call<Dags>(api.baseUrl, "PATCH", "/api/v2/dags?dag_id_pattern=api_%25&paused=false&limit=2", { headers: auth, body: { is_paused: true } });
    assert.equal(paused.status, 200, paused.text);
    assert.deepEqual(paused.body.dags.map((d) => [d.dag_id, d.is_paused]), [["api_fail", true], ["api_ok", true]]);
    assert.deepEqual(await ids("?paused=true"), ["api_fail", "api_ok"]);
    const back = await call<Dags>(api.baseUrl, "PATCH", "/api/v2/dags?dag_id_pattern=~", { headers: auth, body: { is_paused: false } });
    assert.equal(back.body.total_entries, 3);
    assert.deepEqual(await ids("?paused=true"), []);
  });

  void it("deletes a DAG's history, refusing while a run has not ended; the DAG stays listed", async () => {
    const slow = await trigger("api_slow", { hold_first_try: true });
    await waitForTaskState(engine.runner, "api_slow", slow, "nap", "running", 30_000);
    const refused = await call(api.baseUrl, "DELETE", "/api/v2/dags/api_slow", { headers: auth });
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.text, new RegExp(slow.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    await engine.runner.patchRun("api_slow", slow, { state: "failed" }, { by: "test" });
    const deleted = await call(api.baseUrl, "DELETE", "/api/v2/dags/api_slow", { headers: auth });
    assert.equal(deleted.status, 200, deleted.text);
    const runs = await call<{ total_entries: number }>(api.baseUrl, "GET", "/api/v2/dags/api_slow/dagRuns");
    assert.equal(runs.body.total_entries, 0);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags/api_slow")).status, 200, "its file is still there: it stays");
    assert.equal((await call(api.baseUrl, "DELETE", "/api/v2/dags/no_such_dag", { headers: auth })).status, 404);
  });

  void it("lists the runner process as an alive SchedulerJob", async () => {
    const alive = await call<Jobs>(api.baseUrl, "GET", "/api/v2/jobs?is_alive=true");
    assert.equal(alive.status, 200, alive.text);
    assert.equal(alive.body.total_entries, 1);
    assert.deepEqual([alive.body.jobs[0]?.state, alive.body.jobs[0]?.job_type, alive.body.jobs[0]?.end_date], ["running", "SchedulerJob", null]);
    assert.equal((await call<Jobs>(api.baseUrl, "GET", "/api/v2/jobs?is_alive=false")).body.total_entries, 0);
    assert.equal((await call<Jobs>(api.baseUrl, "GET", "/api/v2/jobs?job_type=TriggererJob")).body.total_entries, 0);
    assert.equal((await call<Jobs>(api.baseUrl, "GET", "/api/v2/jobs?job_state=running&order_by=-start_date&order_by=hostname")).body.total_entries, 1);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/jobs?order_by=pid")).status, 422);
  });

  void it("keeps the configuration to itself unless exposed, then masks every secret", async () => {
    const hidden = await call(api.baseUrl, "GET", "/api/v2/config", { headers: { Accept: "application/json" } });
    assert.equal(hidden.status, 403, hidden.text);
    assert.match(hidden.text, /expose_config/);
    const json = await call<Config>(exposed.baseUrl, "GET", "/api/v2/config", { headers: { Accept: "application/json" } });
    assert.equal(json.status, 200, json.text);
    const postgres = json.body.sections.find((s) => s.name === "postgres");
    assert.equal(postgres?.options.find((o) => o.key === "password")?.value, "< hidden >");
    assert.match(postgres?.options.find((o) => o.key === "port")?.value ?? "", /^\d+$/);
    assert.ok(!json.text.includes("jwt_secret\":\"") || /jwt_secret","value":"< hidden >/.test(json.text), "no secret shown");
    const text = await call(exposed.baseUrl, "GET", "/api/v2/config?section=postgres", { headers: { Accept: "text/plain" } });
    assert.match(text.text, /^\[postgres\]\n/);
    assert.match(text.text, /password = < hidden >/);
    const option = await call<Config>(exposed.baseUrl, "GET", "/api/v2/config/section/postgres/option/port", { headers: { Accept: "application/json" } });
    assert.deepEqual(option.body.sections.map((s) => [s.name, s.options.length]), [["postgres", 1]]);
    assert.equal((await call(exposed.baseUrl, "GET", "/api/v2/config?section=nope", { headers: { Accept: "application/json" } })).status, 404);
    assert.equal((await call(exposed.baseUrl, "GET", "/api/v2/config", { headers: { Accept: "image/png" } })).status, 406);
  });
});

void describe("pools: default_pool and an exclusive resource with its occupant and queue", () => {
  const held = defineDag({ id: "pool_holder", description: "holds a resource until released", fileloc: "test/api/dags-jobs-config.test.ts", exclusive: ["world"], maxActiveRuns: 2 })
    .task("hold", async (ctx) => {
      ctx.log.info(`hold: ${await taskHolds.hold(`${ctx.runId}/hold`, ctx.signal)}`);
    })
    .build();
  let api: ApiHarness;
  const engine = useTestRunner([held], { beforeStop: () => api?.close() });
  type Pool = { name: string; slots: number; occupied_slots: number; queued_slots: number; open_slots: number; description: string | null };

  void it("shows the holder and the queue, refuses changes, and answers login and logout", async () => {
    api = await startApi(engine.runner);
    const first = (await engine.runner.triggerRun("pool_holder", { runId: "first", logicalDate: null, conf: {}, note: null, runType: "manual", triggeredBy: "test" })).runId;
    await waitForTaskState(engine.runner, "pool_holder", first, "hold", "running", 30_000);
    await engine.runner.triggerRun("pool_holder", { runId: "second", logicalDate: null, conf: {}, note: null, runType: "manual", triggeredBy: "test" });
    const pools = await call<{ pools: Pool[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/pools");
    assert.equal(pools.status, 200, pools.text);
    assert.deepEqual(pools.body.pools.map((p) => p.name), ["default_pool", "world"]);
    const world = await call<Pool>(api.baseUrl, "GET", "/api/v2/pools/world");
    assert.deepEqual([world.body.slots, world.body.occupied_slots, world.body.open_slots, world.body.queued_slots], [1, 1, 0, 1]);
    assert.match(world.body.description ?? "", /held by pool_holder\/first/);
    assert.match(world.body.description ?? "", /waiting: pool_holder\/second/);
    const byName = await call<{ pools: Pool[] }>(api.baseUrl, "GET", "/api/v2/pools?order_by=-name&pool_name_pattern=o");
    assert.deepEqual(byName.body.pools.map((p) => p.name), ["world", "default_pool"]);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/pools/nope")).status, 404);
    const create = await call(api.baseUrl, "POST", "/api/v2/pools", { headers: auth, body: { name: "p", slots: 3 } });
    assert.equal(create.status, 409, create.text);
    assert.match(create.text, /worker_concurrency/);
    assert.equal((await call(api.baseUrl, "DELETE", "/api/v2/pools/world", { headers: auth })).status, 409);
    taskHolds.release(`${first}/hold`);
    await engine.runner.waitForRun("pool_holder", first, { timeoutMs: 20_000 });
    await waitForTaskState(engine.runner, "pool_holder", "second", "hold", "running", 30_000);
    assert.match((await call<Pool>(api.baseUrl, "GET", "/api/v2/pools/world")).body.description ?? "", /held by pool_holder\/second.*no run waits/);
    taskHolds.release("second/hold");
    await engine.runner.waitForRun("pool_holder", "second", { timeoutMs: 20_000 });

    const login = await call<{ token_url: string; next: string | null }>(api.baseUrl, "GET", "/api/v2/auth/login?next=/ui/");
    assert.deepEqual([login.status, login.body.token_url, login.body.next], [200, "/auth/token", "/ui/"]);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/auth/login?next=https://evil.example/")).status, 400, "no open redirect");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/auth/login?next=//evil.example/")).status, 400);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/auth/logout")).status, 200);
  });
});
