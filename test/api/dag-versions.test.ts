// DAG versions through the API: the versions of a DAG and one of them, the version a run (and its task
// instances) was made from, a second version made by a runner with a changed DAG while the first run
// keeps its own, sources per version, import errors from Postgres, reparse requests, and stale DAGs.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagDetailsResponse, DagResponse, DagRunResponse, DagVersionResponse, ImportErrorResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import { createRunner, DagRegistry, defineDag } from "../../src/runner/index.ts";
import { SERVER_MIGRATION_SETS } from "../../src/server/index.ts";
import { silentLogger, startRunner, useTestRunner, withClient } from "../../testkit/runner/runner-db.ts";
import { auth, call, problemText, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { apiOk, testDags } from "../../testkit/runner/api-dags.ts";

type VersionPage = { dag_versions: DagVersionResponse[]; total_entries: number };
type SourceResponse = { content: string | null; dag_id: string; version_number: number | null };

/** api_ok with a third task: a changed structure under the same id and file. */
const apiOkWithThird = defineDag({ id: "api_ok", description: "two tasks in a row", fileloc: apiOk.fileloc })
  .task("first", () => undefined)
  .task("second", { upstream: ["first"] }, () => undefined)
  .task("third", { upstream: ["second"] }, () => undefined)
  .build();

void describe("DAG versions, sources, import errors, reparse and stale DAGs", () => {
  let api: ApiHarness;
  let firstRunId = "";
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner);
  });

  void it("a DAG given in code has version 1: listed, got, and the DAG's latest_dag_version", async () => {
    const list = await call<VersionPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions");
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.total_entries, 1);
    const [v1] = list.body.dag_versions;
    assert.deepEqual({ ...v1, id: undefined, created_at: undefined }, {
      id: undefined,
      created_at: undefined,
      version_number: 1,
      dag_id: "api_ok",
      bundle_name: "dags-folder",
      bundle_version: null,
      dag_display_name: "api_ok",
      bundle_url: null,
    });
    const one = await call<DagVersionResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions/1");
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, v1);
    const details = await call<DagDetailsResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok/details");
    assert.deepEqual(details.body.latest_dag_version, v1);

    const filtered = await call<VersionPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions?version_number=1&bundle_name=dags-folder");
    assert.equal(filtered.body.total_entries, 1);
    for (const query of ["bundle_name=elsewhere", "bundle_version=abc", "version_number=7"]) {
      const empty = await call<VersionPage>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagVersions?${query}`);
      assert.deepEqual(empty.body, { dag_versions: [], total_entries: 0 }, query);
    }
  });

  void it("an unknown version or DAG is 404 naming it; a bad order_by is 422", async () => {
    const noVersion = await call(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions/2");
    assert.equal(noVersion.status, 404);
    assert.equal(noVersion.body.field, "version_number");
    assert.match(problemText(noVersion.body), /'api_ok' has no version 2/);
    for (const path of ["/api/v2/dags/no_such_dag/dagVersions", "/api/v2/dags/no_such_dag/dagVersions/1", "/api/v2/dags/no_such_dag/dagVersions?bundle_name=x"]) {
      const res = await call(api.baseUrl, "GET", path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.field, "dag_id", path);
    }
    const badNumber = await call(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions/first");
    assert.equal(badNumber.status, 400);
    assert.equal(badNumber.body.field, "version_number");
    const badOrder = await call(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions?order_by=created_at");
    assert.equal(badOrder.status, 422);
    assert.equal(badOrder.body.field, "order_by");
  });

  void it("a DAG carries its own parse fields: not stale, no import errors, last_parsed_time from its row", async () => {
    const dag = await call<DagResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok");
    const recorded = await withClient(engine.db, async (client) => (await client.query<{ t: Date }>("select last_parsed_time as t from runner.dags where dag_id = 'api_ok'")).rows[0]?.t);
    assert.ok(recorded);
    assert.equal(dag.body.last_parsed_time, recorded.toISOString());
    assert.equal(dag.body.is_stale, false);
    assert.equal(dag.body.has_import_errors, false);
    assert.equal(dag.body.last_parse_duration, null, "a DAG given in code is not parsed from a file");
    assert.equal(dag.body.bundle_version, null);
  });

  void it("a run and its task instances carry the version the run was made from", async () => {
    const created = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_ok/dagRuns", { headers: auth, body: { logical_date: null } });
    assert.equal(created.status, 200, created.text);
    firstRunId = created.body.dag_run_id;
    assert.deepEqual(created.body.dag_versions.map((v) => [v.dag_id, v.version_number]), [["api_ok", 1]]);
    const done = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${firstRunId}/wait?timeout=20`);
    assert.equal(done.body.state, "success", done.text);
    const tis = await call<{ task_instances: TaskInstanceResponse[] }>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${firstRunId}/taskInstances`);
    assert.deepEqual(tis.body.task_instances.map((ti) => ti.dag_version?.version_number), [1, 1]);
    assert.deepEqual(tis.body.task_instances[0]?.dag_version, created.body.dag_versions[0]);
  });

  void it("a runner started with a changed api_ok makes version 2; the first run still says version 1", async () => {
    const second = await startRunner(engine.db, [apiOkWithThird]);
    await second.stop();
    const list = await call<VersionPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions?order_by=-version_number");
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.dag_versions.map((v) => v.version_number), [2, 1]);
    assert.equal(list.body.total_entries, 2);
    const paged = await call<VersionPage>(api.baseUrl, "GET", "/api/v2/dags/api_ok/dagVersions?limit=1&offset=1");
    assert.deepEqual(paged.body.dag_versions.map((v) => v.version_number), [2]);
    assert.equal(paged.body.total_entries, 2);
    const details = await call<DagDetailsResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok/details");
    assert.equal(details.body.latest_dag_version?.version_number, 2);
    assert.deepEqual(details.body.task_ids, ["first", "second", "third"]);
    const run = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${firstRunId}`);
    assert.deepEqual(run.body.dag_versions.map((v) => v.version_number), [1]);
    assert.deepEqual(run.body.task_ids, ["first", "second"]);
    const ti = await call<TaskInstanceResponse>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${firstRunId}/taskInstances/first`);
    assert.equal(ti.body.dag_version?.version_number, 1);
  });

  void it("clearTaskInstances with run_on_latest_version: a dry run lists the task version 2 adds and moves nothing; a run not ended is 409", async () => {
    const path = "/api/v2/dags/api_ok/clearTaskInstances";
    const dry = await call<{ task_instances: TaskInstanceResponse[] }>(api.baseUrl, "POST", path, { headers: auth, body: { dag_run_id: firstRunId, dry_run: true, run_on_latest_version: true } });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.task_instances.map((ti) => [ti.task_id, ti.state]), [["third", "scheduled"]]);
    const plain = await call<{ task_instances: TaskInstanceResponse[] }>(api.baseUrl, "POST", path, { headers: auth, body: { dag_run_id: firstRunId, dry_run: true } });
    assert.deepEqual(plain.body.task_instances, [], "on its own version the run has nothing to clear");
    const run = await call<DagRunResponse>(api.baseUrl, "GET", `/api/v2/dags/api_ok/dagRuns/${firstRunId}`);
    assert.deepEqual([run.body.dag_versions.map((v) => v.version_number), run.body.task_ids], [[1], ["first", "second"]]);

    assert.equal((await call(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: auth, body: { is_paused: true } })).status, 200);
    const queued = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_ok/dagRuns", { headers: auth, body: { logical_date: null } });
    const onLatest = await call<{ task_instances: TaskInstanceResponse[] }>(api.baseUrl, "POST", path, { headers: auth, body: { dag_run_id: queued.body.dag_run_id, dry_run: true, run_on_latest_version: true } });
    assert.equal(onLatest.status, 200, "a run made from the latest version has nowhere to move: not refused");
    // the queued run as it would be had version 2 come while it waited
    await withClient(engine.db, (client) => client.query("update runner.dag_runs set dag_version_id = (select id from runner.dag_versions where dag_id = 'api_ok' and version_number = 1) where run_id = $1", [queued.body.dag_run_id]));
    const refused = await call(api.baseUrl, "POST", path, { headers: auth, body: { dag_run_id: queued.body.dag_run_id, dry_run: false, run_on_latest_version: true } });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.field, "run_on_latest_version");
    assert.match(problemText(refused.body), /is queued: only an ended run moves to the latest version/);
    assert.equal((await call(api.baseUrl, "PATCH", `/api/v2/dags/api_ok/dagRuns/${queued.body.dag_run_id}`, { headers: auth, body: { state: "failed" } })).status, 200);
    assert.equal((await call(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: auth, body: { is_paused: false } })).status, 200);
  });

  void it("dagSources answers the source stored with a version; without a version, a DAG given in code falls back to its file", async () => {
    // version 1 as a parsed file would have it: its code stored
    await withClient(engine.db, async (client) => {
      await client.query("insert into runner.dag_code (code_hash, fileloc, source, bundle) values ('test-hash-v1', $1, '// api_ok as it was', '')", [apiOk.fileloc]);
      await client.query("update runner.dag_versions set code_hash = 'test-hash-v1' where dag_id = 'api_ok' and version_number = 1");
    });
    const v1 = await call<SourceResponse>(api.baseUrl, "GET", "/api/v2/dagSources/api_ok?version_number=1");
    assert.equal(v1.status, 200, v1.text);
    assert.deepEqual(v1.body, { content: "// api_ok as it was", dag_id: "api_ok", version_number: 1, dag_display_name: "api_ok" });
    const v2 = await call<SourceResponse>(api.baseUrl, "GET", "/api/v2/dagSources/api_ok?version_number=2");
    assert.deepEqual([v2.body.content, v2.body.version_number], [null, 2], "a version given in code has no stored source");
    const latest = await call<SourceResponse>(api.baseUrl, "GET", "/api/v2/dagSources/api_ok");
    assert.equal(latest.body.version_number, 2);
    assert.match(latest.body.content ?? "", /id: "api_ok"/, "no stored source and no version asked: the file as it is now");
    const text = await call(api.baseUrl, "GET", "/api/v2/dagSources/api_ok?version_number=1", { headers: { Accept: "text/plain" } });
    assert.equal(text.text, "// api_ok as it was");
    const noText = await call(api.baseUrl, "GET", "/api/v2/dagSources/api_ok?version_number=2", { headers: { Accept: "text/plain" } });
    assert.equal(noText.status, 404);
    assert.equal(noText.body.field, "version_number");
    const unknown = await call(api.baseUrl, "GET", "/api/v2/dagSources/api_ok?version_number=9");
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.field, "version_number");
    assert.match(problemText(unknown.body), /no version 9/);
  });

  void it("import errors come from Postgres: listed, filtered, one by id, 404 when absent; the file's DAGs say has_import_errors", async () => {
    const ids = await withClient(engine.db, async (client) => {
      const rows = await client.query<{ id: number }>(
        "insert into runner.import_errors (filename, stack_trace) values ($1, 'Error: half-written'), ('dags/other.ts', 'Error: other') returning id",
        [apiOk.fileloc],
      );
      return rows.rows.map((r) => Number(r.id));
    });
    const [mine, other] = ids;
    assert.ok(mine !== undefined && other !== undefined);
    const all = await call<{ import_errors: ImportErrorResponse[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/importErrors?order_by=-id");
    assert.deepEqual(all.body.import_errors.map((e) => e.import_error_id), [other, mine]);
    assert.equal(all.body.total_entries, 2);
    const byName = await call<{ import_errors: ImportErrorResponse[] }>(api.baseUrl, "GET", "/api/v2/importErrors?filename=dags/other.ts");
    assert.deepEqual(byName.body.import_errors.map((e) => e.import_error_id), [other]);
    const byPattern = await call<{ import_errors: ImportErrorResponse[] }>(api.baseUrl, "GET", "/api/v2/importErrors?filename_pattern=API-DAGS");
    assert.deepEqual(byPattern.body.import_errors.map((e) => e.import_error_id), [mine]);
    const one = await call<ImportErrorResponse>(api.baseUrl, "GET", `/api/v2/importErrors/${mine}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual({ ...one.body, timestamp: undefined }, { import_error_id: mine, timestamp: undefined, filename: apiOk.fileloc, bundle_name: "dags-folder", stack_trace: "Error: half-written" });
    const dag = await call<DagResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok");
    assert.equal(dag.body.has_import_errors, true);

    const gone = await call(api.baseUrl, "GET", `/api/v2/importErrors/${other + 1000}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.field, "import_error_id");
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/importErrors/nope")).status, 400);
    await withClient(engine.db, (client) => client.query("delete from runner.import_errors"));
  });

  void it("PUT parseDagFile records a reparse request for the DAG's file; a forged token is 404, no token 401", async () => {
    const dag = await call<DagResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok");
    const path = `/api/v2/parseDagFile/${dag.body.file_token}`;
    assert.equal((await call(api.baseUrl, "PUT", path)).status, 401);
    const res = await call(api.baseUrl, "PUT", path, { headers: auth });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.text, "null");
    const requests = await withClient(engine.db, async (client) => (await client.query<{ fileloc: string; requested_by: string }>("select fileloc, requested_by from runner.dag_parse_requests")).rows);
    assert.deepEqual(requests, [{ fileloc: apiOk.fileloc, requested_by: "api:rest" }]);
    // another file's location under this token's signature
    const mac = dag.body.file_token.split(".")[1] ?? "";
    const forgedToken = `${Buffer.from("dags/world_next_day.ts").toString("base64url")}.${mac}`;
    for (const token of [forgedToken, "not-a-token"]) {
      const forged = await call(api.baseUrl, "PUT", `/api/v2/parseDagFile/${token}`, { headers: auth });
      assert.equal(forged.status, 404, token);
      assert.equal(forged.body.field, "file_token");
    }
    assert.equal((await withClient(engine.db, (client) => client.query("select 1 from runner.dag_parse_requests"))).rowCount, 1, "nothing recorded for them");
  });

  void it("a stale DAG is listed only with exclude_stale=false and its trigger is 409", async () => {
    await withClient(engine.db, (client) => client.query("update runner.dags set is_stale = true where dag_id = 'api_fail'"));
    const listed = await call<{ dags: DagResponse[] }>(api.baseUrl, "GET", "/api/v2/dags");
    assert.ok(!listed.body.dags.some((d) => d.dag_id === "api_fail"), "stale DAGs are left out by default, as Airflow");
    const withStale = await call<{ dags: DagResponse[] }>(api.baseUrl, "GET", "/api/v2/dags?exclude_stale=false");
    assert.equal(withStale.body.dags.find((d) => d.dag_id === "api_fail")?.is_stale, true);

    // a runner fed by the DAG processor serves every recorded DAG and refuses to trigger a stale one
    // (a runner given DAGs in code runs its own whatever the row says)
    const fed = createRunner({
      pgUrl: engine.db.url,
      dags: new DagRegistry([], { pending: true }),
      concurrency: 1,
      leaseSeconds: 5,
      logger: silentLogger,
      shutdownGraceMs: 500,
      migrationSets: SERVER_MIGRATION_SETS,
    });
    await fed.start();
    const fedApi = await startApi(fed);
    try {
      const refused = await call(fedApi.baseUrl, "POST", "/api/v2/dags/api_fail/dagRuns", { headers: auth, body: { logical_date: null } });
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.field, "dag_id");
      assert.match(problemText(refused.body), /'api_fail' is stale/);
      const runs = await call<{ total_entries: number }>(fedApi.baseUrl, "GET", "/api/v2/dags/api_fail/dagRuns");
      assert.equal(runs.status, 200, "a stale DAG's runs stay readable");
    } finally {
      await fedApi.close();
      await fed.stop();
    }
  });
});
