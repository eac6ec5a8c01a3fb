// Every kind of bad input gets a 4xx problem JSON naming the problem; none gets a 500 or a crash.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";
import { auth, call, problemText, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { testDags } from "../../testkit/runner/api-dags.ts";

interface BadCase {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  status: number;
  /** The problem's `field`, when it names one. */
  field?: string;
  detail: RegExp;
}

const json = { "Content-Type": "application/json" };
const runs = "/api/v2/dags/api_ok/dagRuns";

const cases: BadCase[] = [
  { name: "malformed JSON", method: "POST", path: runs, headers: { ...auth, ...json }, rawBody: '{"conf": ', status: 400, field: "body", detail: /not valid JSON/ },
  { name: "JSON that is not an object", method: "POST", path: runs, headers: { ...auth, ...json }, rawBody: "[1,2]", status: 422, field: "body", detail: /expected object/ },
  { name: "bare JSON null", method: "POST", path: runs, headers: { ...auth, ...json }, rawBody: "null", status: 400, field: "body", detail: /not valid JSON/ },
  { name: "body that is not JSON", method: "POST", path: runs, headers: { ...auth, "Content-Type": "text/plain" }, rawBody: "days=3", status: 415, field: "body", detail: /must be JSON/ },
  { name: "unknown task instance", method: "GET", path: `${runs}/existing_run/taskInstances/no_such_task`, status: 404, field: "task_id", detail: /no_such_task/ },
  { name: "mark of an unknown task instance", method: "PATCH", path: `${runs}/existing_run/taskInstances/no_such_task`, headers: auth, body: { new_state: "success" }, status: 404, field: "task_id", detail: /no_such_task/ },
  { name: "task instance marked running", method: "PATCH", path: `${runs}/existing_run/taskInstances/first`, headers: auth, body: { new_state: "running" }, status: 422, field: "new_state", detail: /success, failed, skipped/ },
  { name: "task instance mark with include_downstream", method: "PATCH", path: `${runs}/existing_run/taskInstances/first`, headers: auth, body: { new_state: "success", include_downstream: true }, status: 422, field: "include_downstream", detail: /not supported/ },
  { name: "details of an unknown DAG", method: "GET", path: "/api/v2/dags/no_such_dag/details", status: 404, field: "dag_id", detail: /no_such_dag/ },
  { name: "source of an unknown DAG", method: "GET", path: "/api/v2/dagSources/no_such_dag", status: 404, field: "dag_id", detail: /no_such_dag/ },
  { name: "a forged file token", method: "GET", path: "/api/v2/dagSources/ZGFncy94LnRz.AAAAAAAAAAAAAAAAAAAAAA", status: 404, field: "dag_id", detail: /file_token/ },
  { name: "stats of an unknown DAG", method: "GET", path: "/api/v2/dagStats?dag_ids=no_such_dag", status: 404, field: "dag_id", detail: /no_such_dag/ },
  { name: "a forged log continuation token", method: "GET", path: `${runs}/existing_run/taskInstances/first/logs/1?token=abc.def`, status: 400, field: "token", detail: /continuation token/ },
  { name: "patch_dag update_mask of another field", method: "PATCH", path: "/api/v2/dags/api_ok?update_mask=description", headers: auth, body: { is_paused: false }, status: 422, field: "update_mask", detail: /is_paused/ },
  { name: "bulk variables without actions", method: "PATCH", path: "/api/v2/variables", headers: auth, body: {}, status: 422, field: "actions", detail: /actions/ },
  { name: "bulk variables with an unknown action", method: "PATCH", path: "/api/v2/variables", headers: auth, body: { actions: [{ action: "rename", entities: [] }] }, status: 422, field: "actions.0.action", detail: /action/ },
  { name: "login without a password", method: "POST", path: "/auth/token", body: { username: "tester" }, status: 422, field: "password", detail: /password/ },
  { name: "login with a wrong password", method: "POST", path: "/auth/token", body: { username: "tester", password: "wrong-password" }, status: 401, field: "password", detail: /invalid username or password/ },
  { name: "a tampered JWT", method: "POST", path: runs, headers: { Authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0ZXIifQ.c2lnbmF0dXJl" }, body: {}, status: 401, field: "Authorization", detail: /not valid/ },
  { name: "unknown DAG", method: "GET", path: "/api/v2/dags/no_such_dag", status: 404, field: "dag_id", detail: /no_such_dag/ },
  { name: "trigger of an unknown DAG", method: "POST", path: "/api/v2/dags/no_such_dag/dagRuns", headers: auth, body: {}, status: 404, field: "dag_id", detail: /no_such_dag/ },
  { name: "runs of an unknown DAG", method: "GET", path: "/api/v2/dags/no_such_dag/dagRuns", status: 404, field: "dag_id", detail: /no_such_dag/ },
  { name: "unknown run", method: "GET", path: `${runs}/no_such_run`, status: 404, field: "dag_run_id", detail: /no_such_run/ },
  { name: "tasks of an unknown run", method: "GET", path: `${runs}/no_such_run/taskInstances`, status: 404, field: "dag_run_id", detail: /no_such_run/ },
  { name: "wait on an unknown run", method: "GET", path: `${runs}/no_such_run/wait?timeout=1`, status: 404, field: "dag_run_id", detail: /no_such_run/ },
  { name: "log of an unknown task", method: "GET", path: `${runs}/existing_run/taskInstances/no_such_task/logs/1`, status: 404, field: "task_id", detail: /no_such_task/ },
  { name: "log of a try that never ran", method: "GET", path: `${runs}/existing_run/taskInstances/first/logs/99`, status: 404, field: "try_number", detail: /99/ },
  { name: "unknown variable", method: "GET", path: "/api/v2/variables/no_such_key", status: 404, field: "variable_key", detail: /no_such_key/ },
  { name: "delete of an unknown variable", method: "DELETE", path: "/api/v2/variables/no_such_key", headers: auth, status: 404, field: "variable_key", detail: /no_such_key/ },
  { name: "conf value of the wrong type", method: "POST", path: runs, headers: auth, body: { conf: { days: "three" } }, status: 400, field: "conf.days", detail: /days/ },
  { name: "conf that is not an object", method: "POST", path: runs, headers: auth, body: { conf: [1, 2] }, status: 422, field: "conf", detail: /conf/ },
  { name: "logical_date that is not a date", method: "POST", path: runs, headers: auth, body: { logical_date: "yesterday" }, status: 422, field: "logical_date", detail: /logical_date/ },
  { name: "dag_run_id with a slash", method: "POST", path: runs, headers: auth, body: { dag_run_id: "a/b" }, status: 422, field: "dag_run_id", detail: /dag_run_id/ },
  { name: "unknown body field", method: "POST", path: runs, headers: auth, body: { confx: {} }, status: 422, field: "confx", detail: /unknown field 'confx'/ },
  { name: "duplicate run id", method: "POST", path: runs, headers: auth, body: { dag_run_id: "existing_run" }, status: 409, field: "dag_run_id", detail: /existing_run/ },
  { name: "NUL in a conf value", method: "POST", path: runs, headers: auth, body: { conf: { days: 1, label: "a\u0000b" } }, status: 422, field: "conf.label", detail: /NUL/ },
  { name: "NUL in a note", method: "POST", path: runs, headers: auth, body: { note: "\u0000" }, status: 422, field: "note", detail: /NUL/ },
  { name: "unpaired surrogate in a conf key", method: "POST", path: runs, headers: auth, body: { conf: { "\ud800": 1 } }, status: 422, field: "conf", detail: /surrogate/ },
  { name: "NUL in a variable value", method: "POST", path: "/api/v2/variables", headers: auth, body: { key: "nul_value", value: "a\u0000" }, status: 422, field: "value", detail: /NUL/ },
  { name: "conf nested 5000 levels deep", method: "POST", path: runs, headers: { ...auth, ...json }, rawBody: `{"conf":${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}`, status: 422, field: "conf.a.a", detail: /nested deeper than 64/ },
  { name: "no token", method: "POST", path: runs, body: {}, status: 401, field: "Authorization", detail: /Bearer/ },
  { name: "wrong token", method: "POST", path: runs, headers: { Authorization: "Bearer not-the-token" }, body: {}, status: 403, field: "Authorization", detail: /token/ },
  { name: "not a bearer header", method: "PATCH", path: "/api/v2/dags/api_ok", headers: { Authorization: "Basic dXNlcjpwYXNz" }, body: { is_paused: true }, status: 401, field: "Authorization", detail: /Bearer/ },
  { name: "no token on delete", method: "DELETE", path: "/api/v2/variables/some_key", status: 401, field: "Authorization", detail: /Bearer/ },
  { name: "body over 1 MiB", method: "POST", path: runs, headers: auth, body: { note: "x".repeat(1_100_000) }, status: 413, field: "body", detail: /larger than the limit/ },
  { name: "encoded slash in a DAG id", method: "GET", path: "/api/v2/dags/a%2Fb", status: 400, field: "dag_id", detail: /dag_id/ },
  { name: "path traversal in a DAG id", method: "GET", path: "/api/v2/dags/..%2F..%2Fetc%2Fpasswd/dagRuns", status: 400, field: "dag_id", detail: /dag_id/ },
  { name: "NUL in a run id", method: "GET", path: `${runs}/abc%00def`, status: 400, field: "dag_run_id", detail: /dag_run_id/ },
  { name: "very long DAG id", method: "GET", path: `/api/v2/dags/${"d".repeat(5000)}`, status: 400, field: "dag_id", detail: /at most 250/ },
  { name: "unicode DAG id", method: "GET", path: `/api/v2/dags/${encodeURIComponent("даг_🚀")}`, status: 400, field: "dag_id", detail: /dag_id/ },
  { name: "broken percent-encoding", method: "GET", path: "/api/v2/dags/%E0%A4%A", status: 400, field: "path", detail: /percent-encoding/ },
  { name: "unicode variable key", method: "GET", path: `/api/v2/variables/${encodeURIComponent("ключ")}`, status: 400, field: "variable_key", detail: /variable_key/ },
  { name: "try number zero", method: "GET", path: `${runs}/existing_run/taskInstances/first/logs/0`, status: 400, field: "try_number", detail: /try numbers start at 1/ },
  { name: "try number not a number", method: "GET", path: `${runs}/existing_run/taskInstances/first/logs/latest`, status: 400, field: "try_number", detail: /try_number/ },
  { name: "negative limit", method: "GET", path: `${runs}?limit=-1`, status: 422, field: "limit", detail: /limit/ },
  { name: "limit not a number", method: "GET", path: "/api/v2/dags?limit=ten", status: 422, field: "limit", detail: /limit/ },
  { name: "offset beyond any table", method: "GET", path: `${runs}?offset=100000000000000`, status: 422, field: "offset", detail: /at most/ },
  { name: "logical_date in year 0", method: "POST", path: runs, headers: auth, body: { logical_date: "0000-01-01T00:00:00Z" }, status: 422, field: "logical_date", detail: /1900/ },
  { name: "run id of only dots", method: "POST", path: runs, headers: auth, body: { dag_run_id: ".." }, status: 422, field: "dag_run_id", detail: /dots/ },
  { name: "negative offset", method: "GET", path: "/api/v2/variables?offset=-5", status: 422, field: "offset", detail: /offset/ },
  { name: "unknown run state filter", method: "GET", path: `${runs}?state=exploded`, status: 422, field: "state", detail: /state/ },
  { name: "unknown order_by", method: "GET", path: `${runs}?order_by=colour`, status: 422, field: "order_by", detail: /order_by/ },
  { name: "misspelt query parameter", method: "GET", path: `${runs}?limt=5`, status: 422, field: "limt", detail: /unknown query parameter 'limt'/ },
  { name: "negative wait timeout", method: "GET", path: `${runs}/existing_run/wait?timeout=-1`, status: 422, field: "timeout", detail: /timeout/ },
  { name: "is_paused not a boolean", method: "PATCH", path: "/api/v2/dags/api_ok", headers: auth, body: { is_paused: "yes" }, status: 422, field: "is_paused", detail: /is_paused/ },
  { name: "variable without a value", method: "POST", path: "/api/v2/variables", headers: auth, body: { key: "k1" }, status: 422, field: "value", detail: /value/ },
  { name: "variable key in body differs from path", method: "PATCH", path: "/api/v2/variables/k2", headers: auth, body: { key: "other", value: "1" }, status: 400, field: "key", detail: /does not match/ },
  { name: "variable PATCH that changes nothing", method: "PATCH", path: "/api/v2/variables/k2", headers: auth, body: {}, status: 422, field: "body", detail: /nothing to change/ },
  { name: "wrong method on a collection", method: "PUT", path: "/api/v2/dags", headers: auth, body: {}, status: 405, detail: /not allowed/ },
  { name: "PUT on a DAG", method: "PUT", path: "/api/v2/dags/api_ok", headers: auth, body: {}, status: 405, detail: /not allowed/ },
  { name: "unknown route", method: "GET", path: "/api/v2/nothing/here", status: 404, detail: /no route/ },
];

void describe("bad input is answered 4xx with problem JSON naming the problem", () => {
  let api: ApiHarness;
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner);
    const created = await call(api.baseUrl, "POST", runs, { headers: auth, body: { dag_run_id: "existing_run" } });
    assert.equal(created.status, 200, created.text);
    const waited = await call(api.baseUrl, "GET", `${runs}/existing_run/wait?timeout=30`);
    assert.equal(waited.status, 200, waited.text);
  });

  for (const c of cases) {
    void it(`${c.name}: ${c.method} -> ${c.status}`, async () => {
      const res = await call(api.baseUrl, c.method, c.path, { headers: c.headers, body: c.body, rawBody: c.rawBody });
      assert.equal(res.status, c.status, `${c.method} ${c.path.slice(0, 80)} answered ${res.status}: ${res.text.slice(0, 300)}`);
      assert.match(res.headers.get("content-type") ?? "", /application\/problem\+json/);
      assert.equal(res.body.status, c.status);
      assert.equal(typeof res.body.title, "string");
      assert.equal(res.body.type, "about:blank");
      assert.match(problemText(res.body), c.detail);
      if (c.field !== undefined) assert.equal(res.body.field, c.field, `field of: ${problemText(res.body)}`);
      if (c.status === 422) {
        assert.ok(Array.isArray(res.body.detail), "a 422's detail is FastAPI's list, as Airflow answers");
        assert.deepEqual(res.body.detail.map((d) => d.loc.at(-1)), (res.body.errors ?? []).map((e) => e.field.split(".").at(-1)));
      }
    });
  }

  void it("still answers after all of that", async () => {
    const res = await call<{ metadatabase: { status: string } }>(api.baseUrl, "GET", "/api/v2/monitor/health");
    assert.equal(res.status, 200);
    assert.equal(res.body.metadatabase.status, "healthy");
  });

  void it("a 405 names the allowed methods in Allow", async () => {
    const res = await call(api.baseUrl, "PUT", "/api/v2/variables", { headers: auth, body: {} });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, POST, PATCH, HEAD");
  });

  void it("a 401 carries WWW-Authenticate", async () => {
    const res = await call(api.baseUrl, "POST", "/api/v2/variables", { body: { key: "k", value: "v" } });
    assert.equal(res.status, 401);
    assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/);
  });
});
