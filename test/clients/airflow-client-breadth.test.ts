// Every call the runner serves, made through Airflow's official Python client (3.3.2) in one
// process (test/clients/airflow_client_breadth.py), each with what it did read back; every list
// filter and order_by field of the run, task instance and DAG lists, through the client, against a
// run list built for it and compared with the model (testkit/runner/run-list-model.ts); and every
// airflowctl 0.1.5 command whose call is served (airflowctl-commands.ts). The served calls are
// the app's own routes that Airflow's document has, so a route added without a client call fails.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import { promisify } from "node:util";
import { Registry } from "prom-client";
import { DAG_ORDER_FIELDS, RUN_ORDER_FIELDS, TASK_INSTANCE_ORDER_FIELDS } from "../../src/api/schemas.ts";
import { repoRoot } from "../../src/config/stand.ts";
import { defineDag } from "../../src/runner/index.ts";
import { airflowRestApi } from "../../testkit/runner/airflow-contract.ts";
import { TEST_USER, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { apiDaily, apiOk, testDags } from "../../testkit/runner/api-dags.ts";
import { useTestRunner, withClient } from "../../testkit/runner/runner-db.ts";
import { listCases } from "../../testkit/runner/run-list-cases.ts";
import { expectedAnswer, type ListCase } from "../../testkit/runner/run-list-model.ts";
import { RUN_LIST_DAGS, readRunList, seedRunList, type RunListData } from "../../testkit/runner/run-list-seed.ts";
import { assertFacts, type BreadthReport } from "./breadth-facts.ts";
import { airflowctlSuite } from "./airflowctl-commands.ts";

const run = promisify(execFile);
const python = path.join(repoRoot, ".venv-airflow/bin/python");

/** Task groups as the runner has them: the task instances whose id starts with `<group_id>.`. */
const apiGroups = defineDag({ id: "api_groups", description: "tasks in groups", fileloc: "test/clients/airflow-client-breadth.test.ts" })
  .task("grp.a", () => undefined)
  .task("grp.b", () => undefined)
  .task("grp.inner.c", () => undefined)
  .task("grpx.d", () => undefined)
  .task("after", { upstream: ["grp.a", "grp.b", "grp.inner.c", "grpx.d"] }, () => undefined)
  .build();

const AIRFLOW_OPERATIONS = new Set(
  Object.values(airflowRestApi.paths).flatMap((ops) => Object.values(ops).map((op) => (op as { operationId?: string }).operationId ?? "")),
);

void describe("the official Airflow clients call every route the runner serves", () => {
  let api: ApiHarness;
  let lists: ApiHarness;
  let report: BreadthReport;
  let data: RunListData;
  let cases: ListCase[] = [];
  const engine = useTestRunner([...testDags, apiDaily, apiGroups], { beforeStop: () => api?.close() });
  const listEngine = useTestRunner(RUN_LIST_DAGS, { beforeStop: () => lists?.close() });

  before(async () => {
    assert.ok(existsSync(python), `no Airflow clients in .venv-airflow: run 'make install' (scripts/airflow-venv.sh)`);
    api = await startApi(engine.runner, new Registry(), { testConnection: "enabled", exposeConfig: "non-sensitive-only" });
    lists = await startApi(listEngine.runner);
    const seeded = await seedRunList(listEngine.runner, listEngine.db);
    data = await readRunList(listEngine.db);
    cases = listCases(data, seeded, { runs: RUN_ORDER_FIELDS, runAliases: ["queued_at"], taskInstances: TASK_INSTANCE_ORDER_FIELDS, dags: DAG_ORDER_FIELDS });
    await withClient(engine.db, (client) => client.query("insert into runner.import_errors (filename, stack_trace) values ('dags/broken_breadth.ts', 'Error: half-written')"));
    const env = {
      // passing the environment on to the child, not reading configuration from it
      // eslint-disable-next-line no-restricted-properties
      ...process.env,
      AIRFLOW_BASE_URL: api.baseUrl,
      AIRFLOW_LIST_URL: lists.baseUrl,
      AIRFLOW_USER: TEST_USER.username,
      AIRFLOW_PASSWORD: TEST_USER.password,
      BREADTH_INPUT: JSON.stringify({ cases }),
    };
    const { stdout } = await run(python, [path.join(repoRoot, "test/clients/airflow_client_breadth.py")], { env, timeout: 180_000, maxBuffer: 64 << 20 });
    report = JSON.parse(stdout) as BreadthReport;
  });

  void it("every served call of Airflow's API is made through the client, and each call answers as designed", () => {
    const served = api.app.routeSpecs.filter((s) => s.tag !== "Not served" && AIRFLOW_OPERATIONS.has(s.operationId)).map((s) => s.operationId);
    const wanted = [...new Set(served)].sort();
    assert.ok(served.length >= 98, `the app serves ${served.length} of Airflow's calls`);
    const clientOps = new Set(report.client_ops);
    assert.deepEqual(wanted.filter((op) => !clientOps.has(op)), [], "served calls the client has no method for");
    const called = new Set(report.calls.map((c) => c.op));
    assert.deepEqual(wanted.filter((op) => !called.has(op)), [], "served calls the flow never makes: add them to airflow_client_breadth.py");
    const failed = report.calls.filter((c) => !c.ok);
    assert.deepEqual(failed.map((c) => `${c.call}: ${c.error ?? ""}`), [], "calls that did not answer as designed");
  });

  void it("what each call did, read back through the client and the database", async () => {
    await assertFacts(report.facts, engine, apiOk.fileloc);
  });

  void it("the event log holds every change the flow made, under its user, and nothing else", () => {
    const specs = new Map(api.app.routeSpecs.map((s) => [s.operationId, s]));
    // a change answered below 400 that is not a dry run (docs/api.md, The event log)
    const changes = report.calls.filter((c) => {
      const spec = specs.get(c.op);
      return c.ok && c.status === undefined && spec !== undefined && spec.method !== "get" && spec.audit !== false && !c.dry && !spec.path.endsWith("/dry_run");
    });
    const logged = report.facts.event_log as { event: string }[];
    assert.ok(Array.isArray(logged), `the event log was read: ${JSON.stringify(logged)}`);
    assert.deepEqual(logged.map((e) => e.event).sort(), changes.map((c) => c.op).sort());
    assert.deepEqual(report.facts.event_log_one, [true, TEST_USER.username, true], "get_event_log answers the first event of the list, by its id");
  });

  void it("every order_by field and filter of the run, task instance and DAG lists, through the client, equals the model", () => {
    const byName = new Map(report.lists.cases.map((c) => [c.name, c]));
    for (const [op, params] of Object.entries(report.lists.signatures)) {
      const exercised = new Set(cases.filter((c) => c.op === op).flatMap((c) => Object.keys(c.args)));
      assert.deepEqual(params.filter((p) => !exercised.has(p)), [], `${op}: parameters of the client's no case exercises`);
    }
    const orderCases = (op: ListCase["op"], key: string) => cases.some((c) => c.op === op && [c.args.order_by].flat().includes(key));
    const orderOps: [ListCase["op"], readonly string[]][] = [
      ["get_dag_runs", [...RUN_ORDER_FIELDS, "queued_at"]],
      ["get_list_dag_runs_batch", RUN_ORDER_FIELDS],
      ["get_task_instances", TASK_INSTANCE_ORDER_FIELDS],
      ["get_task_instances_batch", TASK_INSTANCE_ORDER_FIELDS],
      ["get_dags", DAG_ORDER_FIELDS],
    ];
    for (const [op, fields] of orderOps) {
      assert.deepEqual(fields.flatMap((f) => [f, `-${f}`]).filter((k) => !orderCases(op, k)), [], `${op}: order_by keys no case sorts by`);
    }
    const mismatches: string[] = [];
    for (const c of cases) {
      const got = byName.get(c.name);
      const want = expectedAnswer(data, c);
      const answered = got === undefined ? "no answer" : got.ids === undefined ? { status: got.status } : { ids: got.ids, total: got.total };
      if (JSON.stringify(answered) !== JSON.stringify(want)) {
        const text = (v: unknown) => JSON.stringify(v).slice(0, 400);
        mismatches.push(`${c.name}\n  want ${text(want)}\n  got  ${text(answered)}${got?.error === undefined ? "" : ` ${got.error.slice(0, 200)}`}`);
      }
    }
    assert.ok(cases.length >= 200, `${cases.length} cases`);
    assert.equal(mismatches.length, 0, `${mismatches.length} of ${cases.length} list cases differ from the model:\n${mismatches.join("\n")}`);
  });

  airflowctlSuite(() => ({ api, engine: engine.runner }));
});
