// Operator controls over the REST API, in Airflow's bodies: PATCH a run's state (and note, with
// update_mask), POST clearTaskInstances (dry run by default, as in Airflow); bad input is a 4xx
// naming the field (422 for a body the schema refuses, as Airflow's FastAPI does), never a 5xx.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { testDags } from "../../testkit/runner/api-dags.ts";

type TaskPage = { task_instances: TaskInstanceResponse[]; total_entries: number };

void describe("operator controls over the REST API", () => {
  let api: ApiHarness;
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner);
  });

  async function triggerAndWait(dagId: string): Promise<DagRunResponse> {
    const run = await call<DagRunResponse>(api.baseUrl, "POST", `/api/v2/dags/${dagId}/dagRuns`, { headers: auth, body: { logical_date: null } });
    assert.equal(run.status, 200, run.text);
    const done = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/${dagId}/dagRuns/${run.body.dag_run_id}/wait?timeout=20`);
    return done.body;
  }

  void it("PATCH marks a running run failed; update_mask applies only the fields it names", async () => {
    const run = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_slow/dagRuns", { headers: auth, body: { logical_date: null } });
    const path = `/api/v2/dags/api_slow/dagRuns/${run.body.dag_run_id}`;
    const masked = await call<DagRunResponse>(api.baseUrl, "PATCH", `${path}?update_mask=note`, { headers: auth, body: { state: "failed", note: "looked at it" } });
    assert.equal(masked.status, 200, masked.text);
    assert.equal(masked.body.note, "looked at it");
    assert.notEqual(masked.body.state, "failed", "update_mask=note leaves the state alone");

    const marked = await call<DagRunResponse>(api.baseUrl, "PATCH", path, { headers: auth, body: { state: "failed" } });
    assert.equal(marked.status, 200, marked.text);
    assert.equal(marked.body.state, "failed");
    assert.ok(marked.body.end_date);
    const tis = await call<TaskPage>(api.baseUrl, "GET", `${path}/taskInstances`);
    assert.equal(tis.body.task_instances[0]?.state, "failed");
  });

  void it("clearTaskInstances: a dry run lists, a real one reruns the failed task in the same run", async () => {
    const failed = await triggerAndWait("api_fail");
    assert.equal(failed.state, "failed");
    const body = { dag_run_id: failed.dag_run_id, only_failed: true, include_downstream: true };
    const dry = await call<TaskPage>(api.baseUrl, "POST", "/api/v2/dags/api_fail/clearTaskInstances", { headers: auth, body });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.task_instances.map((t) => t.task_id).sort(), ["after", "boom"]);
    const still = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/api_fail/dagRuns/${failed.dag_run_id}`);
    assert.equal(still.body.state, "failed", "dry_run defaults to true: nothing changed");

    const real = await call<TaskPage>(api.baseUrl, "POST", "/api/v2/dags/api_fail/clearTaskInstances", { headers: auth, body: { ...body, dry_run: false } });
    assert.equal(real.status, 200, real.text);
    const again = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/api_fail/dagRuns/${failed.dag_run_id}/wait?timeout=20`);
    assert.equal(again.body.state, "failed", "api_fail fails on every try, so the rerun fails again");
    const tis = await call<TaskPage>(api.baseUrl, "GET", `/api/v2/dags/api_fail/dagRuns/${failed.dag_run_id}/taskInstances`);
    assert.equal(tis.body.task_instances.find((t) => t.task_id === "boom")?.try_number, 4, "two tries before, two after the clear");
  });

  void it("bad input is a 4xx naming the field; no token is 401", async () => {
    const done = await triggerAndWait("api_ok");
    const path = `/api/v2/dags/api_ok/dagRuns/${done.dag_run_id}`;
    const cases: [string, string, unknown, number, string][] = [
      ["PATCH", path, { state: "running" }, 422, "state"],
      ["PATCH", path, { state: "queued" }, 400, "state"],
      ["PATCH", path, { color: "red" }, 422, ""],
      ["PATCH", "/api/v2/dags/api_ok/dagRuns/no_such_run", { state: "failed" }, 404, "dag_run_id"],
      ["PATCH", "/api/v2/dags/no_such_dag/dagRuns/x", { state: "failed" }, 404, "dag_id"],
      ["POST", "/api/v2/dags/api_ok/clearTaskInstances", { dry_run: false }, 400, "dag_run_id"],
      ["POST", "/api/v2/dags/api_ok/clearTaskInstances", { dag_run_id: done.dag_run_id, task_ids: ["nope"] }, 400, "task_ids"],
      ["POST", "/api/v2/dags/api_ok/clearTaskInstances", { dag_run_id: "no_such_run" }, 404, "dag_run_id"],
      ["POST", "/api/v2/dags/api_ok/clearTaskInstances", { dag_run_id: done.dag_run_id, only_running: true }, 422, "only_running"],
    ];
    for (const [method, url, body, status, field] of cases) {
      const answer = await call(api.baseUrl, method, url, { headers: auth, body });
      assert.equal(answer.status, status, `${method} ${url} ${JSON.stringify(body)}: ${answer.text}`);
      if (field) assert.match(answer.text, new RegExp(field), `${method} ${url} names ${field}`);
    }
    const noToken = await call(api.baseUrl, "PATCH", path, { body: { state: "failed" } });
    assert.equal(noToken.status, 401);
  });
});
