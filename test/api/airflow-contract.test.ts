// Airflow's document is the contract: every route we serve that Airflow has answers, for real,
// something that validates against vendor/airflow/v2-rest-api-generated.yaml (harness.call checks
// each answer; this file calls every route and proves each was seen). Also: login tokens (expiry,
// tampering), the PATCH of a task instance, the log continuation token and bulk variables (a DAG
// folder's import errors: test/dag-processor/).
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { SignJWT } from "jose";
import type { DagRunResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import { useTestRunner, withClient } from "../../testkit/runner/runner-db.ts";
import { airflowTemplate, validatedAnswers } from "../../testkit/runner/airflow-contract.ts";
import { TEST_LOGIN, TEST_USER, auth, call, problemText, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { apiDaily, apiGrouped, testDags } from "../../testkit/runner/api-dags.ts";
import { readFileSync } from "node:fs";
import { NOT_SERVED } from "../../src/api/routes/not-served.ts";

type TaskPage = { task_instances: TaskInstanceResponse[]; total_entries: number };
type LogPage = { content: { event: string }[]; continuation_token: string | null };

void describe("every route answers as Airflow's document says", () => {
  let api: ApiHarness;
  let jwt: string;
  const engine = useTestRunner([...testDags, apiDaily, apiGrouped], { beforeStop: () => api?.close() });
  const bearer = () => ({ Authorization: `Bearer ${jwt}` });

  before(async () => {
    api = await startApi(engine.runner, undefined, { testConnection: "enabled", exposeConfig: "non-sensitive-only" });
    // an import error as the DAG processor records one (this runner's DAGs are given in code)
    await withClient(engine.db, (client) =>
      client.query("insert into runner.import_errors (filename, stack_trace) values ($1, $2)", ["dags/broken.ts", "Error: boom\n    at dags/broken.ts:1:7"]),
    );
    const login = await call<{ access_token: string }>(api.baseUrl, "POST", "/auth/token", { body: TEST_USER });
    assert.equal(login.status, 201, login.text);
    jwt = login.body.access_token;
  });

  void it("logs in like Airflow: JSON or form, /auth/token/cli, 401 for bad, expired or tampered tokens", async () => {
    const form = await fetch(`${api.baseUrl}/auth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(TEST_USER).toString(),
    });
    assert.equal(form.status, 201);
    const cli = await call<{ access_token: string }>(api.baseUrl, "POST", "/auth/token/cli", { body: TEST_USER });
    assert.equal(cli.status, 201);
    const bad = await call(api.baseUrl, "POST", "/auth/token", { body: { username: TEST_USER.username, password: "not-it" } });
    assert.equal(bad.status, 401);
    const unknown = await call(api.baseUrl, "POST", "/auth/token", { body: { username: "nobody", password: "whatever-1" } });
    assert.equal(unknown.status, 401);

    const created = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_ok/dagRuns", { headers: bearer(), body: { logical_date: null } });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.triggering_user_name, TEST_USER.username);
    const key = new TextEncoder().encode(TEST_LOGIN.jwtSecret);
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(TEST_USER.username)
      .setIssuer("clickstream-stand-runner")
      .setAudience("apache-airflow")
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(key);
    const late = await call(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: { Authorization: `Bearer ${expired}` }, body: { is_paused: false } });
    assert.equal(late.status, 401);
    assert.match(problemText(late.body), /expired/);
    const [head, payload] = jwt.split(".");
    const forged = `${head}.${Buffer.from(JSON.stringify({ sub: "admin", exp: 9_999_999_999 })).toString("base64url")}.${jwt.split(".")[2]}`;
    const tampered = await call(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: { Authorization: `Bearer ${forged}` }, body: { is_paused: false } });
    assert.equal(tampered.status, 401);
    assert.ok(payload);
    const staticToken = await call(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: auth, body: { is_paused: false } });
    assert.equal(staticToken.status, 200, "the static token keeps working for make");
  });

  void it("a task instance is marked (PATCH new_state), its note set, and the run goes on", async () => {
    const run = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_slow/dagRuns", { headers: bearer(), body: { logical_date: null } });
    const base = `/api/v2/dags/api_slow/dagRuns/${run.body.dag_run_id}`;
    const marked = await call<TaskPage>(api.baseUrl, "PATCH", `${base}/taskInstances/nap`, { headers: bearer(), body: { new_state: "success", note: "done by hand" } });
    assert.equal(marked.status, 200, marked.text);
    assert.equal(marked.body.task_instances[0]?.state, "success");
    assert.equal(marked.body.task_instances[0]?.note, "done by hand");
    const done = await call<DagRunResponse>(api.baseUrl, "GET", `${base}/wait?timeout=10`);
    assert.equal(done.body.state, "success", "its only task marked success: the run ends green");
    const noteOnly = await call<TaskPage>(api.baseUrl, "PATCH", `${base}/taskInstances/nap?update_mask=note`, { headers: bearer(), body: { new_state: "failed", note: "second look" } });
    assert.equal(noteOnly.body.task_instances[0]?.state, "success", "update_mask=note leaves the state");
    const one = await call<TaskInstanceResponse>(api.baseUrl, "GET", `${base}/taskInstances/nap`);
    assert.equal(one.body.note, "second look");
  });

  void it("a running try's log carries a continuation token that reads on; a finished one's is null", async () => {
    // the try naps until it is marked (hold_first_try): it is running for as long as the test reads,
    // by construction (a 1.5 s nap ended before the heartbeat flushed its line about one run in ten)
    const run = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_slow/dagRuns", { headers: bearer(), body: { logical_date: null, conf: { hold_first_try: true } } });
    const base = `/api/v2/dags/api_slow/dagRuns/${run.body.dag_run_id}`;
    const logPath = `${base}/taskInstances/nap/logs/1`;
    let first: LogPage | undefined;
    for (let i = 0; i < 200 && !first; i++) {
      const res = await call<LogPage>(api.baseUrl, "GET", logPath);
      if (res.status === 200 && res.body.content.length > 0) first = res.body;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(first?.continuation_token, "the running try's log has a token");
    assert.deepEqual(first.content.map((l) => l.event), ["napping"]);
    const marked = await call(api.baseUrl, "PATCH", `${base}/taskInstances/nap`, { headers: bearer(), body: { new_state: "success" } });
    assert.equal(marked.status, 200, marked.text);
    await call(api.baseUrl, "GET", `${base}/wait?timeout=10`);
    const rest = await call<LogPage>(api.baseUrl, "GET", `${logPath}?token=${encodeURIComponent(first.continuation_token)}`);
    assert.equal(rest.status, 200, rest.text);
    assert.ok(!rest.body.content.some((l) => l.event === "napping"), "nothing sent twice");
    assert.equal(rest.body.continuation_token, null);
    const text = await call(api.baseUrl, "GET", logPath, { headers: { Accept: "text/plain" } });
    assert.match(text.text, /Z INFO napping\n/);
    const ndjson = await call(api.baseUrl, "GET", logPath, { headers: { Accept: "application/x-ndjson" } });
    assert.equal((JSON.parse(ndjson.text.split("\n")[0] ?? "") as { event: string }).event, "napping");
  });

  void it("bulk variables: a failing action changes nothing and names the keys", async () => {
    await call(api.baseUrl, "POST", "/api/v2/variables", { headers: bearer(), body: { key: "bulk_x", value: "1" } });
    const res = await call<Record<string, { success: string[]; errors: { error: string; status_code: number }[] }>>(api.baseUrl, "PATCH", "/api/v2/variables", {
      headers: bearer(),
      body: {
        actions: [
          { action: "create", entities: [{ key: "bulk_x", value: "2" }, { key: "bulk_y", value: "3" }] },
          { action: "create", entities: [{ key: "bulk_x", value: "4" }], action_on_existence: "overwrite" },
          { action: "delete", entities: ["bulk_nope"], action_on_non_existence: "skip" },
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.create?.success, ["bulk_x"]);
    assert.equal(res.body.create?.errors[0]?.status_code, 409);
    assert.match(res.body.create?.errors[0]?.error ?? "", /'bulk_x'/);
    assert.deepEqual(res.body.delete, { success: [], errors: [] });
    assert.equal((await engine.runner.getVariable("bulk_x")).value, "4");
  });

  void it("answers 501 naming the concept for each of Airflow's calls this runner does not have, and docs/api.md lists them all", async () => {
    const doc = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## Not served"), doc.indexOf("## Airflow's own clients"));
    let calls = 0;
    for (const concept of NOT_SERVED) {
      for (const [method, template, operationId] of concept.calls) {
        calls += 1;
        assert.ok(airflowTemplate(method, template.replace(/\{(\w+)\}/g, "x")) !== undefined || /state.store/.test(template), `${operationId} is Airflow's`);
        const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => (name === "map_index" ? "-1" : name === "try_number" ? "1" : `some_${name}`));
        const res = await call(api.baseUrl, method.toUpperCase(), path, { headers: bearer(), body: method === "get" || method === "delete" ? undefined : {} });
        assert.equal(res.status, 501, `${method} ${path}: ${res.text.slice(0, 200)}`);
        assert.match(problemText(res.body), new RegExp(`${operationId}: this runner has no ${concept.name}`));
        assert.ok(section.includes(`\`${operationId}\``), `docs/api.md's Not served table names ${operationId}`);
      }
    }
    assert.equal(calls, 30);
  });

  void it("answers every other route Airflow has, and each answer was checked against Airflow's document", async () => {
    const run = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_fail/dagRuns", { headers: bearer(), body: { logical_date: null, conf: {} } });
    const runPath = `/api/v2/dags/api_fail/dagRuns/${run.body.dag_run_id}`;
    const grouped = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_grouped/dagRuns", { headers: bearer(), body: { logical_date: null } });
    assert.equal((await engine.runner.waitForRun("api_grouped", grouped.body.dag_run_id, { timeoutMs: 20_000 })).state, "success");
    const groupPath = `/api/v2/dags/api_grouped/dagRuns/${grouped.body.dag_run_id}/taskGroupInstances/grp`;
    const reads = [
      "/api/v2/dags",
      "/api/v2/dags?dag_id_pattern=api_%25&paused=false&order_by=-dag_id",
      "/api/v2/dags/api_ok",
      "/api/v2/dags/api_ok/details",
      `${runPath}/wait?timeout=20`,
      "/api/v2/dags/api_fail/dagRuns?state=failed&state=success&order_by=-run_after",
      runPath,
      `${runPath}/taskInstances`,
      `${runPath}/taskInstances/boom`,
      `${runPath}/taskInstances/boom/logs/1`,
      "/api/v2/variables",
      "/api/v2/variables/bulk_x",
      "/api/v2/monitor/health",
      "/api/v2/version",
      "/api/v2/importErrors",
      "/api/v2/dagStats",
      "/api/v2/dagSources/api_ok",
      "/api/v2/dagSources/api_ok?version_number=1",
      "/api/v2/dags/api_ok/dagVersions?order_by=-version_number",
      "/api/v2/dags/api_ok/dagVersions/1",
      "/api/v2/dags/~/dagRuns?dag_id_pattern=api_&order_by=dag_id&order_by=-start_date&state=failed&state=queued&state=running",
      `${runPath.replace("/dags/api_fail/", "/dags/~/").replace(/\/dagRuns\/[^/]+$/, "/dagRuns/~")}/taskInstances?state=failed&order_by=-try_number&order_by=start_date`,
      `${runPath}/taskInstances/boom/tries`,
      `${runPath}/taskInstances/boom/tries/1`,
      `${runPath}/taskInstances/boom/dependencies`,
      `${runPath}/taskInstances/boom/links`,
      `${runPath}/taskInstances/boom/-1`,
      `${runPath}/taskInstances/boom/-1/tries`,
      `${runPath}/taskInstances/boom/-1/tries/1`,
      `${runPath}/taskInstances/boom/-1/dependencies`,
      "/api/v2/eventLogs?order_by=-id&event_pattern=token|trigger",
      "/api/v2/dags/api_ok/tasks",
      "/api/v2/dags/api_ok/tasks/second",
      "/api/v2/dagTags",
      "/api/v2/dagWarnings",
      "/api/v2/plugins",
      "/api/v2/plugins/importErrors",
      "/api/v2/providers",
      "/api/v2/dags?dag_run_state=failed&last_dag_run_state=failed&order_by=-last_run_start_date&order_by=dag_id&dag_id_prefix_pattern=api_",
      `${runPath}/wait?interval=0.5&result=boom`,
      "/api/v2/dags/~/dagRuns/~/taskInstances/~/xcomEntries?order_by=-timestamp&order_by=key&xcom_key_pattern=return",
      "/api/v2/jobs?is_alive=true&order_by=-latest_heartbeat",
      "/api/v2/config?section=postgres",
      "/api/v2/config/section/postgres/option/port",
      "/api/v2/connections?order_by=-conn_type&order_by=id&connection_id_pattern=stand_",
      "/api/v2/connections/stand_postgres",
      "/api/v2/pools?order_by=-name",
      "/api/v2/pools/default_pool",
      "/api/v2/auth/login?next=/ui/",
      "/api/v2/auth/logout",
    ];
    for (const p of reads) {
      const res = await call(api.baseUrl, "GET", p);
      assert.equal(res.status, 200, `${p}: ${res.text.slice(0, 300)}`);
    }
    const audit = await call<{ event_logs: { event_log_id: number }[] }>(api.baseUrl, "GET", "/api/v2/eventLogs?limit=1");
    assert.equal((await call(api.baseUrl, "GET", `/api/v2/eventLogs/${audit.body.event_logs[0]?.event_log_id ?? 0}`)).status, 200);
    const dag = await call<{ file_token: string }>(api.baseUrl, "GET", "/api/v2/dags/api_ok");
    const byToken = await call<{ dag_id: string; content: string | null }>(api.baseUrl, "GET", `/api/v2/dagSources/${dag.body.file_token}`);
    // a file token names a file (Airflow 2): the answer is its source, under one of its DAGs
    assert.ok(["api_ok", "api_fail", "api_slow", "api_daily"].includes(byToken.body.dag_id));
    assert.match(byToken.body.content ?? "", /id: "api_ok"/);
    const errors = await call<{ import_errors: { filename: string; import_error_id: number }[] }>(api.baseUrl, "GET", "/api/v2/importErrors");
    assert.deepEqual(errors.body.import_errors.map((e) => e.filename), ["dags/broken.ts"]);
    const oneError = await call(api.baseUrl, "GET", `/api/v2/importErrors/${errors.body.import_errors[0]?.import_error_id ?? 0}`);
    assert.equal(oneError.status, 200, oneError.text);
    const writes: [string, string, unknown, number][] = [
      ["PATCH", "/api/v2/dags/api_ok?update_mask=is_paused", { is_paused: false }, 200],
      ["PATCH", `${runPath}?update_mask=note`, { note: "seen" }, 200],
      ["POST", "/api/v2/dags/api_fail/clearTaskInstances", { dag_run_id: run.body.dag_run_id, task_ids: [["boom", -1]] }, 200],
      ["PATCH", "/api/v2/variables/bulk_x", { key: "bulk_x", value: { a: 1 } }, 200],
      ["DELETE", "/api/v2/variables/bulk_x", undefined, 204],
      ["PUT", `/api/v2/parseDagFile/${dag.body.file_token}`, undefined, 201],
      ["PATCH", `${runPath}/taskInstances/boom/dry_run`, { new_state: "success" }, 200],
      ["PATCH", `${runPath}/taskInstances/boom/-1?update_mask=note`, { note: "by index" }, 200],
      ["PATCH", `${runPath}/taskInstances/boom/-1/dry_run`, { new_state: "success" }, 200],
      ["POST", "/api/v2/dags/~/dagRuns/list", { dag_ids: ["api_fail", "api_ok"], states: ["failed", "running", "queued"], order_by: "-id", page_limit: 5 }, 200],
      ["POST", "/api/v2/dags/~/dagRuns/~/taskInstances/list", { dag_ids: ["api_fail"], state: ["failed", "running", "queued", "scheduled"], order_by: "-start_date,id" }, 200],
      ["POST", `${runPath}/taskInstances/boom/xcomEntries`, { key: "contract", value: { n: 1 } }, 201],
      ["GET", `${runPath}/taskInstances/boom/xcomEntries/contract`, undefined, 200],
      ["PATCH", `${runPath}/taskInstances/boom/xcomEntries/contract`, { value: [1, 2] }, 200],
      ["DELETE", `${runPath}/taskInstances/boom/xcomEntries/contract`, undefined, 204],
      ["POST", `${runPath}/clear`, { dry_run: false, only_failed: true }, 200],
      ["POST", "/api/v2/dags/~/clearDagRuns", { dag_runs: [{ dag_id: "api_fail", dag_run_id: run.body.dag_run_id }] }, 200],
      ["PATCH", "/api/v2/dags/api_ok/dagRuns", { actions: [{ action: "create", entities: [{ dag_run_id: "contract_bulk" }] }] }, 200],
      ["POST", "/api/v2/connections", { connection_id: "contract_conn", conn_type: "http", host: "h", password: "p" }, 201],
      ["PATCH", "/api/v2/connections/contract_conn?update_mask=host", { connection_id: "contract_conn", conn_type: "http", host: "h2" }, 200],
      ["PATCH", "/api/v2/connections", { actions: [{ action: "create", action_on_existence: "skip", entities: [{ connection_id: "contract_conn", conn_type: "http" }] }] }, 200],
      ["POST", "/api/v2/connections/test", { connection_id: "stand_runner_db", conn_type: "postgres" }, 200],
      ["POST", "/api/v2/connections/defaults", undefined, 204],
      ["DELETE", "/api/v2/connections/contract_conn", undefined, 204],
      ["PATCH", "/api/v2/dags?dag_id_pattern=api_ok", { is_paused: false }, 200],
      ["POST", "/api/v2/dags/api_ok/favorite", undefined, 204],
      ["GET", "/api/v2/dags?is_favorite=true", undefined, 200],
      ["POST", "/api/v2/dags/api_ok/unfavorite", undefined, 204],
      ["PATCH", `${groupPath}/dry_run`, { new_state: "failed" }, 200],
      ["PATCH", `${groupPath}?update_mask=note`, { new_state: "failed", note: "the group" }, 200],
    ];
    for (const [method, p, body, status] of writes) {
      const res = await call(api.baseUrl, method, p, { headers: bearer(), body });
      assert.equal(res.status, status, `${method} ${p}: ${res.text.slice(0, 300)}`);
    }
    const enqueued = await call<{ token: string }>(api.baseUrl, "POST", "/api/v2/connections/enqueue-test", { headers: bearer(), body: { connection_id: "stand_runner_db", conn_type: "postgres" } });
    assert.equal(enqueued.status, 202, enqueued.text);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/connections/enqueue-test", { headers: { "Airflow-Connection-Test-Token": enqueued.body.token } })).status, 200);
    await engine.runner.waitForRun("api_ok", "contract_bulk", { timeoutMs: 20_000 });
    assert.equal((await call(api.baseUrl, "DELETE", "/api/v2/dags/api_ok/dagRuns/contract_bulk", { headers: bearer() })).status, 204);
    await engine.runner.waitForRun("api_fail", run.body.dag_run_id, { timeoutMs: 20_000 });
    const bulkTis = await call(api.baseUrl, "PATCH", `${runPath}/taskInstances`, { headers: bearer(), body: { actions: [{ action: "update", entities: [{ task_id: "boom", note: "bulk" }] }] } });
    assert.equal(bulkTis.status, 200, bulkTis.text);
    assert.equal((await call(api.baseUrl, "DELETE", `${runPath}/taskInstances/after`, { headers: bearer() })).status, 200);
    assert.equal((await call(api.baseUrl, "DELETE", "/api/v2/dags/api_fail", { headers: bearer() })).status, 200, "the DAG's history, last: nothing after reads it");
    // backfills of api_daily (a backfill needs a schedule): pause, unpause and cancel it before its ten dates have run
    const window = { dag_id: "api_daily", from_date: "2025-01-01T00:00:00Z", to_date: "2025-01-10T00:00:00Z", max_active_runs: 1 };
    assert.equal((await call(api.baseUrl, "POST", "/api/v2/backfills/dry_run", { headers: bearer(), body: window })).status, 200);
    const backfill = await call<{ id: number }>(api.baseUrl, "POST", "/api/v2/backfills", { headers: bearer(), body: window });
    assert.equal(backfill.status, 200, backfill.text);
    for (const p of ["/api/v2/backfills?dag_id=api_daily", `/api/v2/backfills/${backfill.body.id}`]) assert.equal((await call(api.baseUrl, "GET", p)).status, 200, p);
    for (const action of ["pause", "unpause", "cancel"]) {
      const res = await call(api.baseUrl, "PUT", `/api/v2/backfills/${backfill.body.id}/${action}`, { headers: bearer() });
      assert.equal(res.status, 200, `${action}: ${res.text}`);
    }
    // every route we mount that Airflow has was answered with a 2xx that validated
    // (a route that never answers 2xx here, as listMapped and externalLogUrl, is checked by its own test)
    const served = api.app.routeSpecs.filter((spec) => spec.tag !== "Not served" && Object.keys(spec.responses).some((s) => s.startsWith("2")) && airflowTemplate(spec.method, spec.path.replace(/\{(\w+)\}/g, "x")) !== undefined);
    assert.ok(served.length >= 24, `only ${served.length} of our routes are Airflow's`);
    const unseen = served.filter((spec) => ![...validatedAnswers].some((seen) => new RegExp(`^${spec.method.toUpperCase()} ${spec.path.replace(/[{}]/g, "\\$&")} 2\\d\\d$`).test(seen)));
    assert.deepEqual(unseen.map((s) => `${s.method.toUpperCase()} ${s.path}`), []);
  });
});
