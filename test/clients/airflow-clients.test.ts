// The official Airflow clients against the runner's API, unchanged: apache-airflow-client (Python)
// through test/clients/airflow_client_flow.py, airflowctl command by command, and the curl+jq flow of
// deployment scripts (deploy-flow.sh). The clients live in .venv-airflow, made by `make install`
// (scripts/airflow-venv.sh); a missing venv fails the test, naming the fix: nothing is skipped.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { repoRoot } from "../../src/config/stand.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";
import { TEST_USER, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { testDags } from "../../testkit/runner/api-dags.ts";

const run = promisify(execFile);
const venv = path.join(repoRoot, ".venv-airflow");
const python = path.join(venv, "bin/python");
const airflowctl = path.join(venv, "bin/airflowctl");

interface FlowReport {
  calls: { call: string; ok: boolean; error?: string }[];
  facts: Record<string, unknown>;
}

void describe("the official Airflow clients drive the runner unchanged", () => {
  let api: ApiHarness;
  let home: string;
  const engine = useTestRunner(testDags, { beforeStop: () => api?.close() });

  before(async () => {
    assert.ok(existsSync(python) && existsSync(airflowctl), `no Airflow clients in ${venv}: run 'make install' (scripts/airflow-venv.sh)`);
    api = await startApi(engine.runner);
    home = mkdtempSync(path.join(tmpdir(), "airflowctl-"));
  });
  after(() => {
    if (home) rmSync(home, { recursive: true, force: true });
  });

  // Passing the environment on to the children, not reading configuration from it.
  // eslint-disable-next-line no-restricted-properties
  const userEnv = () => ({ ...process.env, AIRFLOW_BASE_URL: api.baseUrl, AIRFLOW_USER: TEST_USER.username, AIRFLOW_PASSWORD: TEST_USER.password });

  void it("apache-airflow-client 3.3.2: every everyday call passes", async () => {
    const { stdout } = await run(python, [path.join(repoRoot, "test/clients/airflow_client_flow.py")], { env: userEnv(), timeout: 120_000 });
    const report = JSON.parse(stdout) as FlowReport;
    const failed = report.calls.filter((c) => !c.ok);
    assert.deepEqual(failed, [], `calls the client refused or failed:\n${failed.map((c) => `${c.call}: ${c.error ?? ""}`).join("\n")}`);
    assert.ok(report.calls.length >= 30, `only ${report.calls.length} calls made`);
    const f = report.facts;
    assert.deepEqual(f.dag_ids, ["api_fail", "api_ok", "api_slow"]);
    assert.deepEqual(f.details_params, ["days", "hold"]);
    assert.equal(f.paused, true);
    assert.equal(f.unpaused, false);
    assert.equal(f.triggering_user_name, TEST_USER.username);
    assert.equal(f.ok_run_state, "success");
    assert.deepEqual(f.task_states, { first: "success", second: "success" });
    assert.deepEqual(f.log_events, ["first runs with days=2"]);
    assert.equal(f.log_token, null, "a finished try's log has no continuation token");
    assert.equal(f.stats_success, 1);
    assert.equal(typeof f.running_log_token, "string", "a running try's log carries a continuation token");
    assert.deepEqual(f.running_log_events, ["napping"], "the running try's first lines are read before the run is marked");
    assert.equal(f.marked_state, "failed");
    assert.equal(f.continued_token, null);
    assert.ok(Array.isArray(f.continued_events) && !f.continued_events.includes("napping"), "the token reads on after what was sent");
    assert.deepEqual(f.cleared, ["nap"]);
    assert.equal(f.cleared_run_state, "success");
    assert.equal(f.cleared_try, 2);
    assert.equal(f.fail_run_state, "failed");
    assert.deepEqual(f.marked_task, { state: "success", note: "looked at it" });
    assert.equal(f.variable, "one");
    assert.deepEqual(f.variables, ["client_var"]);
    assert.deepEqual(f.bulk, { create: { success: ["bulk_a", "bulk_b"], errors: [] }, update: { success: ["client_var"], errors: [] }, delete: { success: ["bulk_a"], errors: [] } });
    assert.equal(f.health, "healthy");
    assert.match(String(f.version), /^3\.3\.2\+stand/);
    assert.equal(f.import_errors, 0);
    assert.equal(f.source_has_dag, true);
    assert.equal((await engine.runner.getVariable("bulk_b")).value, '{"n":2}');
  });

  void it("airflowctl 0.1.5: login, DAGs, runs and variables", async () => {
    // eslint-disable-next-line no-restricted-properties
    const env = { ...process.env, AIRFLOW_HOME: home, AIRFLOW_CLI_API_RETRIES: "1" };
    const ctl = async (...args: string[]): Promise<string> => {
      try {
        return (await run(airflowctl, args, { env, timeout: 60_000 })).stdout;
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; message: string };
        assert.fail(`airflowctl ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
      }
    };
    const token = (await ctl("auth", "token", "--api-url", api.baseUrl, "--username", TEST_USER.username, "--password", TEST_USER.password)).trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, `auth token printed: ${token}`);
    await ctl("auth", "login", "--api-url", api.baseUrl, "--api-token", token, "--skip-keyring");
    const t = ["--api-token", token];
    const listed = await ctl("dags", "list", ...t, "-o", "json");
    for (const id of ["api_fail", "api_ok", "api_slow"]) assert.match(listed, new RegExp(`"dag_id": "${id}"`));
    assert.match(await ctl("dags", "get", "api_ok", ...t, "-o", "json"), /"dag_id": "api_ok"/);
    assert.match(await ctl("dags", "get-details", "api_ok", ...t, "-o", "json"), /"timezone": "UTC"/);
    await ctl("dags", "pause", "api_ok", ...t);
    assert.equal((await engine.runner.getDag("api_ok")).isPaused, true);
    await ctl("dags", "unpause", "api_ok", ...t);
    assert.equal((await engine.runner.getDag("api_ok")).isPaused, false);
    await ctl("dags", "trigger", "api_ok", "--dag-run-id", "from_airflowctl", ...t); // airflowctl 0.1.5 cannot parse --conf (argparse type=dict)
    const done = await engine.runner.waitForRun("api_ok", "from_airflowctl", { timeoutMs: 20_000 });
    assert.equal(done.state, "success");
    assert.match(await ctl("dagrun", "get", "api_ok", "from_airflowctl", ...t, "-o", "json"), /"state": "success"/);
    assert.match(await ctl("dagrun", "list", "--dag-id", "api_ok", ...t, "-o", "json"), /from_airflowctl/);
    // not here: 'dags get-stats' of airflowctl 0.1.5 sends its argument's characters as dag_ids
    // (dag_ids=a&dag_ids=p&...); the Python client's get_dag_stats covers the route
    await ctl("dags", "list-import-errors", ...t, "-o", "json");
    await ctl("variables", "create", "--key", "ctl_var", "--value", "v1", ...t);
    assert.match(await ctl("variables", "get", "ctl_var", ...t, "-o", "json"), /"value": "v1"/);
    await ctl("variables", "update", "--key", "ctl_var", "--value", "v2", ...t);
    assert.equal((await engine.runner.getVariable("ctl_var")).value, "v2");
    assert.match(await ctl("variables", "list", ...t, "-o", "json"), /ctl_var/);
    await ctl("variables", "delete", "ctl_var", ...t);
    assert.match(await ctl("version", "--remote", ...t), /3\.3\.2\+stand/);
  });

  void it("the deployment-script flow: token, GET the DAG, POST a run with logical_date null, poll", async () => {
    const { stdout } = await run("bash", [path.join(repoRoot, "test/clients/deploy-flow.sh"), api.baseUrl, "api_ok"], { env: userEnv(), timeout: 120_000 });
    assert.match(stdout, /^manual__\S+ success$/m);
  });
});
