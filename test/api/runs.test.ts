// Trigger -> wait -> terminal through the REST API, in Airflow's field names; task instances and
// logs per try; listing runs with filters.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse, LogResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { testDags } from "../../testkit/runner/api-dags.ts";

type RunPage = { dag_runs: DagRunResponse[]; total_entries: number };
type TaskPage = { task_instances: TaskInstanceResponse[]; total_entries: number };

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

void describe("DAG runs over the REST API", () => {
  let api: ApiHarness;
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner);
  });

  void it("trigger answers a queued run in Airflow's field names; wait answers it finished", async () => {
    const triggered = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_ok/dagRuns", {
      headers: auth,
      body: { dag_run_id: "first_run", logical_date: "2026-01-02T03:04:05Z", conf: { days: 3 }, note: "from the test" },
    });
    assert.equal(triggered.status, 200, triggered.text);
    const run = triggered.body;
    assert.equal(run.dag_run_id, "first_run");
    assert.equal(run.dag_id, "api_ok");
    assert.equal(run.logical_date, "2026-01-02T03:04:05.000Z");
    assert.match(run.queued_at ?? "", ISO);
    assert.deepEqual(run.conf, { days: 3 });
    assert.equal(run.note, "from the test");
    assert.equal(run.run_type, "manual");
    assert.equal(run.triggered_by, "rest_api");
    assert.deepEqual(run.task_ids, ["first", "second"]);
    assert.equal(run.parent_dag_run_id, null);
    assert.ok(["queued", "running"].includes(run.state), run.state);

    const waited = await call<DagRunResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns/first_run/wait?timeout=30");
    assert.equal(waited.status, 200, waited.text);
    assert.equal(waited.headers.get("x-run-terminal"), "true");
    assert.equal(waited.body.state, "success");
    assert.match(waited.body.start_date ?? "", ISO);
    assert.match(waited.body.end_date ?? "", ISO);
    assert.equal(typeof waited.body.duration, "number");

    const fetched = await call<DagRunResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns/first_run");
    assert.deepEqual(fetched.body, waited.body);
  });

  void it("a run without logical_date, run id or body is accepted (Airflow 3 nullable logical_date)", async () => {
    const res = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_ok/dagRuns", { headers: auth });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.logical_date, null);
    assert.ok(res.body.dag_run_id.length > 0);
    const waited = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${encodeURIComponent(res.body.dag_run_id)}/wait?timeout=30`);
    assert.equal(waited.body.state, "success");
  });

  void it("task instances carry Airflow's fields and end success", async () => {
    const res = await call<TaskPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns/first_run/taskInstances");
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.total_entries, 2);
    assert.deepEqual(res.body.task_instances.map((t) => t.task_id).sort(), ["first", "second"]);
    for (const ti of res.body.task_instances) {
      assert.equal(ti.dag_id, "api_ok");
      assert.equal(ti.dag_run_id, "first_run");
      assert.equal(ti.state, "success");
      assert.equal(ti.try_number, 1);
      assert.equal(typeof ti.max_tries, "number");
      assert.match(ti.start_date ?? "", ISO);
      assert.match(ti.end_date ?? "", ISO);
      assert.equal(typeof ti.duration, "number");
      assert.equal(ti.map_index, -1);
      assert.equal(ti.logical_date, "2026-01-02T03:04:05.000Z");
      assert.equal(typeof ti.hostname, "string");
    }
  });

  void it("a failing DAG ends failed: the task retried, downstream upstream_failed, a log per try", async () => {
    const triggered = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_fail/dagRuns", {
      headers: auth,
      body: { dag_run_id: "doomed", logical_date: null },
    });
    assert.equal(triggered.status, 200, triggered.text);
    const waited = await call<DagRunResponse>(api.baseUrl, "GET", "/api/v2/dags/api_fail/dagRuns/doomed/wait?timeout=30");
    assert.equal(waited.body.state, "failed");
    assert.equal(waited.headers.get("x-run-terminal"), "true");

    const tasks = await call<TaskPage>(api.baseUrl, "GET", "/api/v2/dags/api_fail/dagRuns/doomed/taskInstances");
    const byId = new Map(tasks.body.task_instances.map((t) => [t.task_id, t]));
    assert.equal(byId.get("boom")?.state, "failed");
    assert.equal(byId.get("boom")?.try_number, 2);
    assert.match(byId.get("boom")?.error ?? "", /boom on try 2/);
    assert.equal(byId.get("after")?.state, "upstream_failed");

    for (const tryNumber of [1, 2]) {
      const path = `/api/v2/dags/api_fail/dagRuns/doomed/taskInstances/boom/logs/${tryNumber}`;
      const asJson = await call<LogResponse>(api.baseUrl, "GET", path);
      assert.equal(asJson.status, 200, asJson.text);
      assert.equal(asJson.body.continuation_token, null);
      assert.ok(asJson.body.content.some((line) => line.event.includes(`boom attempt ${tryNumber}`)), asJson.text);
      for (const line of asJson.body.content) assert.match(line.timestamp, ISO);

      const asText = await call(api.baseUrl, "GET", path, { headers: { Accept: "text/plain" } });
      assert.equal(asText.status, 200);
      assert.match(asText.headers.get("content-type") ?? "", /^text\/plain/);
      assert.match(asText.text, new RegExp(`^\\S+Z \\w+ .*boom attempt ${tryNumber}`, "m"));
      assert.doesNotMatch(asText.text, new RegExp(`boom attempt ${3 - tryNumber}`));
    }
    const noSuchTry = await call(api.baseUrl, "GET", "/api/v2/dags/api_fail/dagRuns/doomed/taskInstances/boom/logs/3");
    assert.equal(noSuchTry.status, 404);
  });

  void it("wait answers 200 with the current state when the timeout passes first", async () => {
    const triggered = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_slow/dagRuns", { headers: auth, body: { dag_run_id: "slow_one" } });
    assert.equal(triggered.status, 200, triggered.text);
    const started = Date.now();
    const early = await call<DagRunResponse>(api.baseUrl, "GET", "/api/v2/dags/api_slow/dagRuns/slow_one/wait?timeout=0.3");
    assert.equal(early.status, 200);
    assert.ok(Date.now() - started < 5000, "the wait honoured its timeout");
    assert.equal(early.headers.get("x-run-terminal"), "false");
    assert.ok(["queued", "running"].includes(early.body.state), early.body.state);
    const done = await call<DagRunResponse>(api.baseUrl, "GET", "/api/v2/dags/api_slow/dagRuns/slow_one/wait?timeout=30");
    assert.equal(done.body.state, "success");
  });

  void it("lists runs newest first with total_entries, limit, offset, order_by and state", async () => {
    const all = await call<RunPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns");
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.total_entries, 2);
    assert.equal(all.body.dag_runs.length, 2);
    assert.equal(all.body.dag_runs[1]?.dag_run_id, "first_run", "newest first by default");

    const oldestFirst = await call<RunPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns?order_by=queued_at&limit=1");
    assert.deepEqual(oldestFirst.body.dag_runs.map((r) => r.dag_run_id), ["first_run"]);
    assert.equal(oldestFirst.body.total_entries, 2);

    const second = await call<RunPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns?limit=1&offset=1");
    assert.deepEqual(second.body.dag_runs.map((r) => r.dag_run_id), ["first_run"]);

    const failed = await call<RunPage>(api.baseUrl, "GET", "/api/v2/dags/api_fail/dagRuns?state=failed");
    assert.deepEqual(failed.body.dag_runs.map((r) => r.dag_run_id), ["doomed"]);
    const none = await call<RunPage>(api.baseUrl, "GET", "/api/v2/dags/api_fail/dagRuns?state=success");
    assert.equal(none.body.total_entries, 0);
  });
});
