// DAGs and pausing, variables with history, health, metrics, and the OpenAPI document against the
// routes the app really mounts.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { Express } from "express";
import type { DagResponse, VariableChangeResponse, VariableResponse } from "../../src/api/schemas.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";
import { auth, call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { testDags } from "../../testkit/runner/api-dags.ts";

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** "METHOD /path" for every route in the express router stack, walking nested routers. */
function mountedRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (on && method !== "_all") found.push(`${method.toUpperCase()} ${layer.route.path}`);
        }
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return found.sort();
}

void describe("DAGs, variables, health, metrics and OpenAPI", () => {
  let api: ApiHarness;
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });

  before(async () => {
    api = await startApi(engine.runner, engine.runner.metrics);
  });

  void it("lists DAGs and gets one in Airflow's shape", async () => {
    const list = await call<{ dags: DagResponse[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/dags");
    assert.equal(list.status, 200, list.text);
    const ids = list.body.dags.map((d) => d.dag_id);
    assert.ok(ids.includes("api_ok") && ids.includes("api_fail"), ids.join(","));
    assert.equal(list.body.total_entries, ids.length);
    const one = await call<DagResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok");
    assert.equal(one.body.dag_id, "api_ok");
    assert.equal(one.body.is_paused, false);
    assert.equal(one.body.max_active_runs, 1);
    assert.equal(one.body.timetable_summary, null);
    assert.deepEqual(one.body.task_ids, ["first", "second"]);
    const page = await call<{ dags: DagResponse[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/dags?limit=1&offset=1");
    assert.equal(page.body.dags.length, 1);
    assert.equal(page.body.dags[0]?.dag_id, ids[1]);
  });

  void it("pauses and unpauses with PATCH is_paused", async () => {
    const paused = await call<DagResponse>(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: auth, body: { is_paused: true } });
    assert.equal(paused.status, 200, paused.text);
    assert.equal(paused.body.is_paused, true);
    assert.equal((await call<DagResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok")).body.is_paused, true);
    const pausedOnly = await call<{ dags: DagResponse[] }>(api.baseUrl, "GET", "/api/v2/dags?paused=true");
    assert.deepEqual(pausedOnly.body.dags.map((d) => d.dag_id), ["api_ok"]);
    const unpaused = await call<DagResponse>(api.baseUrl, "PATCH", "/api/v2/dags/api_ok", { headers: auth, body: { is_paused: false } });
    assert.equal(unpaused.body.is_paused, false);
    assert.equal((await call<DagResponse>(api.baseUrl, "GET", "/api/v2/dags/api_ok")).body.is_paused, false);
  });

  void it("variables: create, read, list, patch, delete, with history naming the caller", async () => {
    const created = await call<VariableResponse>(api.baseUrl, "POST", "/api/v2/variables", {
      headers: auth,
      body: { key: "api_var", value: "1", description: "a test variable" },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(
      { key: created.body.key, value: created.body.value, description: created.body.description },
      { key: "api_var", value: "1", description: "a test variable" },
    );
    const again = await call(api.baseUrl, "POST", "/api/v2/variables", { headers: auth, body: { key: "api_var", value: "2" } });
    assert.equal(again.status, 409);
    assert.equal(again.body.field, "key");

    const read = await call<VariableResponse>(api.baseUrl, "GET", "/api/v2/variables/api_var");
    assert.equal(read.body.value, "1");
    const list = await call<{ variables: VariableResponse[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/variables");
    assert.ok(list.body.variables.some((v) => v.key === "api_var"));
    assert.equal(list.body.total_entries, list.body.variables.length);

    const patched = await call<VariableResponse>(api.baseUrl, "PATCH", "/api/v2/variables/api_var", {
      headers: { ...auth, "X-Runner-Client": "cli" },
      body: { value: 42 },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.value, "42", "non-string JSON is stored as its JSON text, like Airflow 3");
    assert.equal(patched.body.description, "a test variable", "a field absent from PATCH keeps its value");
    const masked = await call<VariableResponse>(api.baseUrl, "PATCH", "/api/v2/variables/api_var?update_mask=description", {
      headers: auth,
      body: { value: "ignored", description: "changed" },
    });
    assert.equal(masked.body.value, "42");
    assert.equal(masked.body.description, "changed");

    const deleted = await call(api.baseUrl, "DELETE", "/api/v2/variables/api_var", { headers: auth });
    assert.equal(deleted.status, 204);
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/variables/api_var")).status, 404);

    const history = await call<{ changes: VariableChangeResponse[]; total_entries: number }>(api.baseUrl, "GET", "/api/v2/variables/api_var/history");
    assert.equal(history.status, 200, history.text);
    const values = history.body.changes.map((c) => [c.old_value, c.new_value]);
    assert.deepEqual(values, [[null, "1"], ["1", "42"], ["42", "42"], ["42", null]]);
    assert.deepEqual(history.body.changes.map((c) => c.changed_by), ["api:rest", "api:cli", "api:rest", "api:rest"]);
    for (const change of history.body.changes) assert.ok(!Number.isNaN(Date.parse(change.changed_at)));
    assert.equal((await call(api.baseUrl, "GET", "/api/v2/variables/never_was/history")).status, 404);
  });

  void it("health answers Airflow's shape", async () => {
    const res = await call<{ metadatabase: { status: string }; scheduler: { status: string; latest_scheduler_heartbeat: string | null } }>(
      api.baseUrl,
      "GET",
      "/api/v2/monitor/health",
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.metadatabase.status, "healthy");
    assert.equal(res.body.scheduler.status, "healthy");
    assert.ok(!Number.isNaN(Date.parse(res.body.scheduler.latest_scheduler_heartbeat ?? "")));
  });

  void it("metrics are Prometheus text with the API's request counter", async () => {
    await call(api.baseUrl, "GET", "/api/v2/dags/no_such_dag");
    const res = await call(api.baseUrl, "GET", "/metrics");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    assert.match(res.text, /^# TYPE runner_api_requests_total counter$/m);
    assert.match(res.text, /^runner_api_requests_total\{method="GET",route="\/api\/v2\/dags\/:dag_id",status="404"\} \d+$/m);
  });

  void it("openapi.json is OpenAPI 3.1 and describes exactly the API routes the app mounts", async () => {
    const res = await call<{ openapi: string; paths: Record<string, Record<string, { security: unknown[]; responses: object }>> }>(
      api.baseUrl,
      "GET",
      "/api/v2/openapi.json",
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, "3.1.0");
    const documented = Object.entries(res.body.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`))
      .sort();
    // The document covers the REST API; the web view's pages (/, /ui/...) are HTML, not API.
    const mounted = mountedRoutes(api.app).filter((r) => / \/(api\/|auth\/|metrics$)/.test(r));
    assert.ok(mounted.length >= 18, `found only ${mounted.length} mounted routes`);
    assert.deepEqual(documented, mounted);
    const refs = [...res.text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1] ?? "");
    assert.ok(refs.length > 0);
    const schemas = (JSON.parse(res.text) as { components: { schemas: Record<string, unknown> } }).components.schemas;
    for (const ref of new Set(refs)) assert.ok(schemas[ref], `$ref to a missing component: ${ref}`);
    for (const [path, ops] of Object.entries(res.body.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        // logging in needs no token; Airflow's POST …/list calls are reads with a body of filters
        const mutating = method !== "get" && !path.startsWith("/auth/") && !path.endsWith("/list");
        assert.equal(op.security.length > 0, mutating, `${method} ${path}: security matches auth`);
      }
    }
  });
});
