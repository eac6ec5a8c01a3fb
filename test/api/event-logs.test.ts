// The audit trail: each change made through the API is one event (who, when, which DAG, run and
// task, the body with secrets masked), a dry run and a read are none, a failed login is one, and
// GET /api/v2/eventLogs filters and sorts them as Airflow's does. Also through the page actions of
// the web view (owner "web").
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { TEST_USER, auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { testDags } from "../../testkit/runner/api-dags.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";

interface Event {
  event_log_id: number;
  when: string;
  event: string;
  owner: string | null;
  dag_id: string | null;
  run_id: string | null;
  task_id: string | null;
  logical_date: string | null;
  extra: string | null;
}
type Events = { event_logs: Event[]; total_entries: number };

void describe("the event log", () => {
  let api: ApiHarness;
  let bearer: Record<string, string> = {};
  let runId = "";
  let started = "";
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });
  const events = async (query = "") => {
    const res = await call<Events>(api.baseUrl, "GET", `/api/v2/eventLogs${query}`);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  before(async () => {
    api = await startApi(engine.runner);
    started = new Date().toISOString();
    const login = await call<{ access_token: string }>(api.baseUrl, "POST", "/auth/token", { body: TEST_USER });
    bearer = { Authorization: `Bearer ${login.body.access_token}` };
  });

  void it("records each change with its owner, DAG, run and body; reads and dry runs are not recorded", async () => {
    const run = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_fail/dagRuns", { headers: bearer, body: { logical_date: "2026-05-01T00:00:00Z", conf: {}, note: "audited" } });
    assert.equal(run.status, 200, run.text);
    runId = run.body.dag_run_id;
    await engine.runner.waitForRun("api_fail", runId, { timeoutMs: 20_000 });
    await call(api.baseUrl, "GET", `/api/v2/dags/api_fail/dagRuns/${runId}`);
    const dry = await call(api.baseUrl, "POST", "/api/v2/dags/api_fail/clearTaskInstances", { headers: bearer, body: { dag_run_id: runId } });
    assert.equal(dry.status, 200, dry.text);
    const cleared = await call(api.baseUrl, "POST", "/api/v2/dags/api_fail/clearTaskInstances", { headers: bearer, body: { dag_run_id: runId, dry_run: false } });
    assert.equal(cleared.status, 200, cleared.text);
    await engine.runner.waitForRun("api_fail", runId, { timeoutMs: 20_000 });
    assert.equal((await call(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: auth, body: { is_paused: true } })).status, 200);
    assert.equal((await call(api.baseUrl, "POST", "/api/v2/variables", { headers: bearer, body: { key: "db_password", value: "hunter2" } })).status, 201);
    assert.equal((await call(api.baseUrl, "POST", "/api/v2/variables", { headers: bearer, body: { key: "plain", value: "seen" } })).status, 201);
    assert.equal((await call(api.baseUrl, "POST", "/api/v2/dags/no_such/dagRuns", { headers: bearer, body: { logical_date: null } })).status, 404);

    const all = await events("?limit=100");
    assert.deepEqual(all.event_logs.map((e) => e.event), ["create_token", "trigger_dag_run", "post_clear_task_instances", "patch_dag", "post_variable", "post_variable"], "a read, a dry run and a refused call leave nothing");
    const [login, trigger, clear, pause, secret, plain] = all.event_logs;
    assert.equal(login?.owner, TEST_USER.username);
    assert.doesNotMatch(login?.extra ?? "", new RegExp(TEST_USER.password), "the password is never kept");
    assert.deepEqual([trigger?.owner, trigger?.dag_id, trigger?.run_id, trigger?.logical_date], [TEST_USER.username, "api_fail", runId, "2026-05-01T00:00:00.000Z"]);
    assert.match(trigger?.extra ?? "", /"note":"audited"/);
    assert.deepEqual([clear?.run_id, pause?.owner, pause?.dag_id], [runId, "api_token (rest)", "api_ok"]);
    assert.match(pause?.extra ?? "", /"is_paused":true/);
    assert.doesNotMatch(secret?.extra ?? "", /hunter2/, "a secret-looking variable's value is masked");
    assert.match(plain?.extra ?? "", /"value":"seen"/);
    assert.ok(all.event_logs.every((e) => e.when >= started));
  });

  void it("records a wrong password as login_failed, naming the user", async () => {
    assert.equal((await call(api.baseUrl, "POST", "/auth/token", { body: { username: "tester", password: "wrong-password" } })).status, 401);
    const failed = await events("?event=login_failed");
    assert.equal(failed.total_entries, 1);
    assert.equal(failed.event_logs[0]?.owner, "tester");
  });

  void it("filters and sorts as Airflow's: ids, owner, included/excluded events, patterns, before/after, order_by; one by id; 404", async () => {
    const byDag = await events("?dag_id=api_fail&order_by=-id");
    assert.deepEqual(byDag.event_logs.map((e) => e.event), ["post_clear_task_instances", "trigger_dag_run"]);
    assert.equal((await events(`?run_id=${runId}`)).total_entries, 2);
    assert.deepEqual((await events("?included_events=patch_dag,post_variable")).event_logs.map((e) => e.event), ["patch_dag", "post_variable", "post_variable"]);
    assert.equal((await events("?excluded_events=post_variable&excluded_events=create_token")).total_entries, 4);
    assert.deepEqual((await events("?event_pattern=CLEAR|pause")).event_logs.map((e) => e.event), ["post_clear_task_instances"]);
    assert.equal((await events("?owner_prefix_pattern=api_token")).total_entries, 1);
    assert.equal((await events("?owner_pattern=TEST")).total_entries, 6);
    assert.equal((await events(`?before=${encodeURIComponent(started)}`)).total_entries, 0);
    assert.equal((await events(`?after=${encodeURIComponent(started)}&map_index=3`)).total_entries, 0);
    const sorted = await events("?order_by=event&order_by=-id&limit=3&offset=1");
    const expected = (await events("?limit=100")).event_logs.sort((a, b) => a.event.localeCompare(b.event) || b.event_log_id - a.event_log_id).slice(1, 4);
    assert.deepEqual(sorted.event_logs.map((e) => e.event_log_id), expected.map((e) => e.event_log_id));
    assert.equal(sorted.total_entries, 7);
    const first = (await events("?limit=1")).event_logs[0];
    const one = await call<Event>(api.baseUrl, "GET", `/api/v2/eventLogs/${first?.event_log_id ?? 0}`);
    assert.deepEqual(one.body, first);
    const missing = await call<{ field?: string }>(api.baseUrl, "GET", "/api/v2/eventLogs/999999");
    assert.deepEqual([missing.status, missing.body.field], [404, "event_log_id"]);
    const bad = await call<{ field?: string }>(api.baseUrl, "GET", "/api/v2/eventLogs?order_by=colour");
    assert.deepEqual([bad.status, bad.body.field], [422, "order_by"]);
  });
});
