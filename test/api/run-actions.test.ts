// What an operator does to whole runs through Airflow's API (clear one, clear several, delete an
// ended one, the bulk call), Airflow's streamed wait, and XCom: a task's pushes seen by the next
// task, listed with Airflow's filters, edited through the API, and hidden by a clear.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { taskHolds, testDags } from "../../testkit/runner/api-dags.ts";
import { useTestRunner, waitForTaskState } from "../../testkit/runner/runner-db.ts";

type Runs = { dag_runs: DagRunResponse[]; total_entries: number };
type Tis = { task_instances: { task_id: string; state: string | null; dag_run_id: string }[]; total_entries: number };
type XCom = { key: string; dag_id: string; run_id: string; task_id: string; map_index: number; value?: unknown };
type XComs = { xcom_entries: XCom[]; total_entries: number };
type Bulk = Record<string, { success: string[]; errors: { error: string; status_code: number }[] }>;

void describe("run actions, the streamed wait and XCom", () => {
  let api: ApiHarness;
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });
  const trigger = async (dagId: string, body: Record<string, unknown> = {}) => {
    const res = await call<DagRunResponse>(api.baseUrl, "POST", `/api/v2/dags/${dagId}/dagRuns`, { headers: auth, body: { logical_date: null, ...body } });
    assert.equal(res.status, 200, res.text);
    return res.body.dag_run_id;
  };
  const ended = (dagId: string, runId: string) => engine.runner.waitForRun(dagId, runId, { timeoutMs: 20_000 });
  let okRun = "";
  let failRun = "";

  before(async () => {
    api = await startApi(engine.runner);
    okRun = await trigger("api_ok", { conf: { days: 3 } });
    failRun = await trigger("api_fail");
    assert.equal((await ended("api_ok", okRun)).state, "success");
    assert.equal((await ended("api_fail", failRun)).state, "failed");
  });

  void it("keeps what a task pushed, lets the next task pull it, and lists entries with Airflow's filters and order", async () => {
    const base = `/api/v2/dags/api_ok/dagRuns/${okRun}/taskInstances`;
    const first = await call<XCom>(api.baseUrl, "GET", `${base}/first/xcomEntries/return_value`);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.value, { days: 3, try: 1 });
    const seen = await call<XCom>(api.baseUrl, "GET", `${base}/second/xcomEntries/seen_from_first`);
    assert.deepEqual(seen.body.value, { days: 3, try: 1 }, "the second task pulled the first's return value");
    const text = await call<XCom>(api.baseUrl, "GET", `${base}/first/xcomEntries/return_value?stringify=true`);
    assert.equal(typeof text.body.value, "string");
    assert.deepEqual(JSON.parse(String(text.body.value)), { days: 3, try: 1 }, "stringify: the value as its JSON text");

    const all = await call<XComs>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries");
    assert.deepEqual(all.body.xcom_entries.map((x) => `${x.task_id}:${x.key}`), ["first:return_value", "second:seen_from_first"], "Airflow's default order: dag, task, run, key");
    assert.ok(all.body.xcom_entries.every((x) => x.value === undefined && x.map_index === -1), "a list carries no values");
    const byKeyDesc = await call<XComs>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?order_by=-key");
    assert.deepEqual(byKeyDesc.body.xcom_entries.map((x) => x.key), ["seen_from_first", "return_value"]);
    const filtered = await call<XComs>(api.baseUrl, "GET", `/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?xcom_key_pattern=SEEN&task_id_prefix_pattern=sec&run_id_pattern=${okRun.slice(0, 8)}`);
    assert.deepEqual(filtered.body.xcom_entries.map((x) => x.key), ["seen_from_first"]);
    assert.equal((await call<XComs>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?map_index=2")).body.total_entries, 0, "no task is mapped");
    const future = await call<XComs>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?run_after_gte=2999-01-01T00:00:00Z");
    assert.equal(future.body.total_entries, 0);
    const page = await call<XComs>(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?limit=1&offset=1");
    assert.deepEqual([page.body.total_entries, page.body.xcom_entries.length], [2, 1]);
    const tiByMapIndex = await call(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances?order_by=map_index&order_by=-state");
    assert.equal(tiByMapIndex.status, 200, `a constant sort column is not an ORDER BY position: ${tiByMapIndex.text}`);
    const badOrder = await call(api.baseUrl, "GET", "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?order_by=value");
    assert.equal(badOrder.status, 422, badOrder.text);
  });

  void it("creates, edits and deletes an entry through the API, refusing a duplicate, a missing key and a bad body", async () => {
    const base = `/api/v2/dags/api_fail/dagRuns/${failRun}/taskInstances/boom/xcomEntries`;
    const created = await call<XCom>(api.baseUrl, "POST", base, { headers: auth, body: { key: "note", value: [1, "two", { three: 3 }] } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.value, [1, "two", { three: 3 }]);
    assert.equal((await call(api.baseUrl, "POST", base, { headers: auth, body: { key: "note", value: 1 } })).status, 409);
    const patched = await call<XCom>(api.baseUrl, "PATCH", `${base}/note`, { headers: auth, body: { value: null } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await call<XCom>(api.baseUrl, "GET", `${base}/note`)).body.value, null);
    assert.equal((await call(api.baseUrl, "PATCH", `${base}/absent`, { headers: auth, body: { value: 1 } })).status, 404);
    const noValue = await call(api.baseUrl, "POST", base, { headers: auth, body: { key: "k" } });
    assert.equal(noValue.status, 422, noValue.text);
    assert.match(noValue.text, /value/);
    assert.equal((await call(api.baseUrl, "POST", base, { headers: auth, body: { key: "k", value: 1, map_index: 3 } })).status, 422);
    assert.equal((await call(api.baseUrl, "POST", `/api/v2/dags/api_fail/dagRuns/${failRun}/taskInstances/nope/xcomEntries`, { headers: auth, body: { key: "k", value: 1 } })).status, 404);
    assert.equal((await call(api.baseUrl, "POST", base, { body: { key: "k", value: 1 } })).status, 401, "a change needs credentials");
    const big = await call(api.baseUrl, "POST", base, { headers: auth, body: { key: "big", value: "x".repeat(600_000) } });
    assert.equal(big.status, 413, big.text);
    assert.equal((await call(api.baseUrl, "DELETE", `${base}/note`, { headers: auth })).status, 204);
    assert.equal((await call(api.baseUrl, "GET", `${base}/note`)).status, 404);
    assert.equal((await call(api.baseUrl, "DELETE", `${base}/note`, { headers: auth })).status, 404);
  });

  void it("clears a run: dry lists the task instances, then the run runs again and a clear hides the old try's XCom", async () => {
    const dry = await call<Tis>(api.baseUrl, "POST", `/api/v2/dags/api_ok/dagRuns/${okRun}/clear`, { headers: auth, body: {} });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.task_instances.map((t) => t.task_id).sort(), ["first", "second"]);
    assert.equal((await engine.runner.getRun("api_ok", okRun)).state, "success", "a dry clear changes nothing");
    const onlyFailed = await call<Tis>(api.baseUrl, "POST", `/api/v2/dags/api_ok/dagRuns/${okRun}/clear`, { headers: auth, body: { only_failed: true } });
    assert.equal(onlyFailed.body.total_entries, 0, "a green run has no failed task instance");
    const cleared = await call<DagRunResponse>(api.baseUrl, "POST", `/api/v2/dags/api_ok/dagRuns/${okRun}/clear`, { headers: auth, body: { dry_run: false, note: "again" } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(cleared.body.note, "again");
    assert.equal((await ended("api_ok", okRun)).state, "success");
    const first = await call<XCom>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${okRun}/taskInstances/first/xcomEntries/return_value`);
    assert.deepEqual(first.body.value, { days: 3, try: 2 }, "the second try's value, not the first's");
    const onlyNew = await call(api.baseUrl, "POST", `/api/v2/dags/api_ok/dagRuns/${okRun}/clear`, { headers: auth, body: { only_new: true } });
    assert.equal(onlyNew.status, 422, onlyNew.text);
  });

  void it("clears several runs across DAGs with ~, checking every run before clearing any", async () => {
    const missing = await call(api.baseUrl, "POST", "/api/v2/dags/~/clearDagRuns", { headers: auth, body: { dry_run: false, dag_runs: [{ dag_id: "api_fail", dag_run_id: failRun }, { dag_id: "api_ok", dag_run_id: "no_such_run" }] } });
    assert.equal(missing.status, 404, missing.text);
    assert.equal((await engine.runner.getRun("api_fail", failRun)).state, "failed", "nothing was cleared");
    const noDag = await call(api.baseUrl, "POST", "/api/v2/dags/~/clearDagRuns", { headers: auth, body: { dag_runs: [{ dag_run_id: failRun }] } });
    assert.equal(noDag.status, 400, noDag.text);
    const partition = await call(api.baseUrl, "POST", "/api/v2/dags/api_fail/clearDagRuns", { headers: auth, body: { dag_runs: [{ dag_run_id: failRun }], partition_key: "p" } });
    assert.equal(partition.status, 422, partition.text);
    const dry = await call<Tis>(api.baseUrl, "POST", "/api/v2/dags/~/clearDagRuns", { headers: auth, body: { only_failed: true, dag_runs: [{ dag_id: "api_fail", dag_run_id: failRun }, { dag_id: "api_ok", dag_run_id: okRun }] } });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.task_instances.map((t) => `${t.dag_run_id}/${t.task_id}`).sort(), [`${failRun}/after`, `${failRun}/boom`].sort());
    const done = await call<Runs>(api.baseUrl, "POST", "/api/v2/dags/api_fail/clearDagRuns", { headers: auth, body: { dry_run: false, dag_runs: [{ dag_run_id: failRun }] } });
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.body.dag_runs.map((r) => r.dag_run_id), [failRun]);
    assert.equal((await ended("api_fail", failRun)).state, "failed", "it ran again and failed again");
  });

  void it("deletes an ended run (its task instances and XCom with it) and refuses a running one", async () => {
    const slow = await trigger("api_slow", { conf: { hold_first_try: true } });
    await waitForTaskState(engine.runner, "api_slow", slow, "nap", "running", 30_000);
    const refused = await call(api.baseUrl, "DELETE", `/api/v2/dags/api_slow/dagRuns/${slow}`, { headers: auth });
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.text, /not ended|mark it failed/);
    await engine.runner.patchRun("api_slow", slow, { state: "failed" }, { by: "test" });
    assert.equal((await call(api.baseUrl, "DELETE", `/api/v2/dags/api_slow/dagRuns/${slow}`, { headers: auth })).status, 204);
    assert.equal((await call(api.baseUrl, "GET", `/api/v2/dags/api_slow/dagRuns/${slow}`)).status, 404);
    assert.equal((await call(api.baseUrl, "DELETE", `/api/v2/dags/api_slow/dagRuns/${slow}`, { headers: auth })).status, 404);

    const doomed = await trigger("api_ok", { conf: { days: 9 } });
    await ended("api_ok", doomed);
    assert.equal((await call(api.baseUrl, "DELETE", `/api/v2/dags/api_ok/dagRuns/${doomed}`, { headers: auth })).status, 204);
    const left = await call<XComs>(api.baseUrl, "GET", `/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?run_id_pattern=${doomed}`);
    assert.equal(left.status, 200, left.text);
    assert.equal(left.body.total_entries, 0, "the run's XCom went with it");
  });

  void it("applies a bulk call's actions in order: create, update with a mask, delete; fail and skip as Airflow", async () => {
    const res = await call<Bulk>(api.baseUrl, "PATCH", "/api/v2/dags/api_ok/dagRuns", {
      headers: auth,
      body: {
        actions: [
          { action: "create", entities: [{ dag_run_id: "bulk_a", note: "made in bulk" }, { dag_run_id: "bulk_b" }] },
          { action: "update", entities: [{ dag_run_id: okRun, note: "bulk note", state: "failed" }], update_mask: ["note"] },
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.create?.success, ["api_ok/bulk_a", "api_ok/bulk_b"]);
    assert.deepEqual(res.body.update?.success, [`api_ok/${okRun}`]);
    const ok = await engine.runner.getRun("api_ok", okRun);
    assert.deepEqual([ok.state, ok.note], ["success", "bulk note"], "the mask kept the state");
    assert.equal((await engine.runner.getRun("api_ok", "bulk_a")).note, "made in bulk");
    await ended("api_ok", "bulk_a");
    await ended("api_ok", "bulk_b");

    const clash = await call<Bulk>(api.baseUrl, "PATCH", "/api/v2/dags/api_ok/dagRuns", { headers: auth, body: { actions: [{ action: "create", entities: [{ dag_run_id: "bulk_a" }, { dag_run_id: "bulk_c" }] }] } });
    assert.equal(clash.body.create?.errors[0]?.status_code, 409);
    assert.deepEqual(clash.body.create?.success, [], "fail (the default) creates none of them");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns/bulk_c")).status, 404);

    const del = await call<Bulk>(api.baseUrl, "PATCH", "/api/v2/dags/~/dagRuns", {
      headers: auth,
      body: { actions: [{ action: "delete", entities: [{ dag_id: "api_ok", dag_run_id: "bulk_a" }, { dag_id: "api_ok", dag_run_id: "gone" }], action_on_non_existence: "skip" }] },
    });
    assert.deepEqual(del.body.delete?.success, ["api_ok/bulk_a"]);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns/bulk_a")).status, 404);
    const missingFails = await call<Bulk>(api.baseUrl, "PATCH", "/api/v2/dags/api_ok/dagRuns", { headers: auth, body: { actions: [{ action: "delete", entities: ["bulk_b", "gone"] }] } });
    assert.equal(missingFails.body.delete?.errors[0]?.status_code, 404);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagRuns/bulk_b")).status, 200, "fail deletes none of them");
    const badAction = await call(api.baseUrl, "PATCH", "/api/v2/dags/api_ok/dagRuns", { headers: auth, body: { actions: [{ action: "explode", entities: [] }] } });
    assert.equal(badAction.status, 422, badAction.text);
  });

  void it("deletes and marks a run's task instances, one by one and in bulk; a run's clear then runs only what is left", async () => {
    const slow = await trigger("api_slow", { conf: { hold_first_try: true } });
    await waitForTaskState(engine.runner, "api_slow", slow, "nap", "running", 30_000);
    const open = await call(api.baseUrl, "DELETE", `/api/v2/dags/api_slow/dagRuns/${slow}/taskInstances/nap`, { headers: auth });
    assert.equal(open.status, 409, open.text);
    await engine.runner.patchRun("api_slow", slow, { state: "failed" }, { by: "test" });

    const runId = await trigger("api_ok", { conf: { days: 1 } });
    await ended("api_ok", runId);
    const base = `/api/v2/dags/api_ok/dagRuns/${runId}/taskInstances`;
    const bulk = await call<Bulk>(api.baseUrl, "PATCH", base, {
      headers: auth,
      body: {
        actions: [
          { action: "update", entities: [{ task_id: "first", new_state: "failed", note: "by bulk" }], update_mask: ["note"] },
          { action: "delete", entities: ["second", "nope"], action_on_non_existence: "skip" },
          { action: "create", entities: [{ task_id: "x" }] },
        ],
      },
    });
    assert.equal(bulk.status, 200, bulk.text);
    assert.deepEqual([bulk.body.update?.success, bulk.body.delete?.success, bulk.body.create?.errors[0]?.status_code], [["first"], ["second"], 400]);
    const first = await call<{ state: string; note: string | null }>(api.baseUrl, "GET", `${base}/first`);
    assert.deepEqual([first.body.state, first.body.note], ["success", "by bulk"], "the mask kept the state");
    assert.equal((await call(api.baseUrl, "GET", `${base}/second`)).status, 404);
    const failing = await call<Bulk>(api.baseUrl, "PATCH", base, { headers: auth, body: { actions: [{ action: "delete", entities: ["first", "nope"] }] } });
    assert.equal(failing.body.delete?.errors[0]?.status_code, 404);
    assert.equal((await call(api.baseUrl, "GET", `${base}/first`)).status, 200, "fail deletes none of them");
    const cleared = await call(api.baseUrl, "POST", `/api/v2/dags/api_ok/dagRuns/${runId}/clear`, { headers: auth, body: { dry_run: false } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal((await ended("api_ok", runId)).state, "success", "the run settles without the deleted task");
    assert.equal((await call(api.baseUrl, "DELETE", `${base}/first`, { headers: auth })).status, 200);
    assert.equal((await call(api.baseUrl, "DELETE", `${base}/first`, { headers: auth })).status, 404);
  });

  void it("streams the run's state as NDJSON until it ends, with its tasks' return values; a JSON-only client gets the last line", async () => {
    const runId = await trigger("api_ok", { conf: { days: 5, hold: true } });
    await waitForTaskState(engine.runner, "api_ok", runId, "first", "running", 30_000);
    const url = `${api.baseUrl}/api/v2/dags/api_ok/dagRuns/${runId}/wait?interval=0.2&result=first&result=second`;
    const streamed = fetch(url, { headers: { Accept: "application/x-ndjson" } });
    const jsonOnly = fetch(url, { headers: { Accept: "application/json" } });
    taskHolds.release(`${runId}/first`);
    await waitForTaskState(engine.runner, "api_ok", runId, "second", "running", 30_000);
    taskHolds.release(`${runId}/second`);
    const res = await streamed;
    assert.equal(res.headers.get("content-type")?.split(";")[0], "application/x-ndjson");
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l) as { state: string; results?: unknown });
    assert.ok(lines.length >= 2, `a line per interval while it ran: ${JSON.stringify(lines)}`);
    assert.ok(lines.slice(0, -1).every((l) => l.state === "running" || l.state === "queued"));
    assert.deepEqual(lines.at(-1), { state: "success", results: { first: { days: 5, try: 1 } } }, "second pushed no return_value");
    const single = await jsonOnly;
    assert.equal(single.headers.get("content-type")?.split(";")[0], "application/json");
    assert.deepEqual(await single.json(), { state: "success", results: { first: { days: 5, try: 1 } } });

    const needsInterval = await call(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${runId}/wait?result=first`);
    assert.equal(needsInterval.status, 400, needsInterval.text);
    assert.equal((await call(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${runId}/wait?interval=0`)).status, 422);
    const extension = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${runId}/wait?timeout=1`);
    assert.equal(extension.body.state, "success", "without interval: the run itself");
  });
});
