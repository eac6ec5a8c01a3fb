// airflowctl 0.1.5's commands beyond those test/clients/airflow-clients.test.ts drives (login, DAGs
// list/get/pause/trigger, runs get/list, variables CRUD, version): each one whose call the runner
// serves, its effect read back through the runner. The commands airflowctl itself gets wrong are
// pinned as they fail, each naming its bug, so a fixed airflowctl shows up here. Part of
// test/clients/airflow-client-breadth.test.ts (its runner, after the Python client's flow).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { repoRoot } from "../../src/config/stand.ts";
import { childExitCode, childOutput } from "../../src/errors.ts";
import { loadStandConfig } from "../../src/config/index.ts";
import type { Runner } from "../../src/runner/index.ts";
import { TEST_USER, call, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { waitUntil } from "../../testkit/runner/runner-db.ts";
import { AIRFLOWCTL_GROUPS } from "../../testkit/matrices.ts";
import { sampleMatrix, sampledTests } from "../../testkit/matrix.ts";

const run = promisify(execFile);
const airflowctl = path.join(repoRoot, ".venv-airflow/bin/airflowctl");

type Outcome = { code: number; out: string };

/** An airflowctl 0.1.5 bug: the command, and what its failure prints. */
const KNOWN_BUGS: { args: string[]; prints: RegExp; bug: string }[] = [
  { args: ["backfill", "create-dry-run", "--dag-id", "api_daily", "--from-date", "2026-03-01T00:00:00Z", "--to-date", "2026-03-02T00:00:00Z"], prints: /validation error.*for BackfillResponse/s, bug: "reads the dry run's answer (DryRunBackfillCollectionResponse) as a BackfillResponse" },
  { args: ["backfill", "pause", "1"], prints: /405 Method Not Allowed/, bug: "POSTs …/pause, which Airflow serves as PUT" },
  { args: ["backfill", "unpause", "1"], prints: /405 Method Not Allowed/, bug: "POSTs …/unpause, which Airflow serves as PUT" },
  { args: ["backfill", "cancel", "1"], prints: /405 Method Not Allowed/, bug: "POSTs …/cancel, which Airflow serves as PUT" },
  { args: ["connections", "test", "--connection-id", "stand_runner_db", "--conn-type", "postgres"], prints: /no attribute 'output'/, bug: "the command has no --output, and its handler reads args.output" },
  { args: ["dags", "get-stats", "api_ok"], prints: /dag_ids=a&dag_ids=p/, bug: "sends its argument's characters as dag_ids" },
  { args: ["dagrun", "list", "--start-date", "2026-03-01T00:00:00Z"], prints: /invalid datetime value/, bug: "--start-date/--end-date parse no date (and would send start_date, which Airflow's list does not have)" },
];

export function airflowctlSuite(harness: () => { api: ApiHarness; engine: Runner }): void {
  void describe("airflowctl 0.1.5: every command whose call is served", () => {
    let home = "";
    let env: NodeJS.ProcessEnv = {};

    async function attempt(...args: string[]): Promise<Outcome> {
      try {
        return { code: 0, out: (await run(airflowctl, args, { env, timeout: 60_000, cwd: home })).stdout };
      } catch (err) {
        const { stdout, stderr } = childOutput(err);
        return { code: childExitCode(err), out: `${stdout}\n${stderr}` };
      }
    }
    async function ctl(...args: string[]): Promise<string> {
      const outcome = await attempt(...args);
      assert.equal(outcome.code, 0, `airflowctl ${args.join(" ")} failed:\n${outcome.out.slice(-1500)}`);
      return outcome.out;
    }
    /** A command's -o json answer (airflowctl prints a list of objects, every value as text). */
    const json = async (...args: string[]) => JSON.parse(await ctl(...args, "-o", "json")) as Record<string, unknown>[];
    /** Several commands at once, two at a time (each is a Python start of ~0.7 s). */
    async function all<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
      const results: T[] = [];
      for (let i = 0; i < jobs.length; i += 2) results.push(...(await Promise.all(jobs.slice(i, i + 2).map((job) => job()))));
      return results;
    }

    // the gate runs a sample of the groups (drawn by TEST_SEED), make test-full every one
    const group = sampledTests(sampleMatrix(AIRFLOWCTL_GROUPS), it);
    before(async () => {
      const { api } = harness();
      home = mkdtempSync(path.join(tmpdir(), "airflowctl-breadth-"));
      const login = await call<{ access_token: string }>(api.baseUrl, "POST", "/auth/token", { body: TEST_USER, airflowCheck: false });
      // passing the environment on to the children, not reading configuration from it
      // eslint-disable-next-line no-restricted-properties
      env = { ...process.env, AIRFLOW_HOME: home, AIRFLOW_CLI_API_RETRIES: "1", AIRFLOW_CLI_TOKEN: login.body.access_token };
      await ctl("auth", "login", "--api-url", api.baseUrl, "--api-token", login.body.access_token, "--skip-keyring");
    });
    after(() => {
      if (home) rmSync(home, { recursive: true, force: true });
    });

    group.test("dags-runs-jobs", "DAGs (update, delete, versions, import errors, tags, warnings, next execution), runs, jobs, plugins, providers", async () => {
      const { engine } = harness();
      const [errorId] = (await engine.listImportErrors()).map((e) => String(e.id));
      const [jobs, plugins, pluginErrors, providers, tags, warnings, versions, version, importError, runs] = await all([
        () => json("jobs", "list", "--is-alive"),
        () => json("plugins", "list"),
        () => json("plugins", "list-import-errors"),
        () => json("providers", "list"),
        () => json("dags", "get-tags"),
        () => json("dags", "list-warning"),
        () => json("dags", "list-version", "api_ok"),
        () => json("dags", "get-version", "api_ok", "1"),
        () => json("dags", "get-import-error", errorId ?? "0"),
        () => json("dagrun", "list", "--dag-id", "api_ok", "--state", "success"),
      ]);
      const next = await ctl("dags", "next-execution", "api_daily");
      assert.deepEqual(jobs?.map((j) => [j.job_type, j.state]), [["SchedulerJob", "running"]]);
      assert.deepEqual([plugins, pluginErrors, providers, tags, warnings], [[], [], [], [], []]);
      assert.deepEqual(versions?.map((v) => [v.dag_id, v.version_number]), [["api_ok", "1"]]);
      assert.deepEqual(version?.map((v) => [v.dag_id, v.version_number, v.bundle_name]), [["api_ok", "1", "dags-folder"]]);
      assert.deepEqual(importError?.map((e) => e.filename), ["dags/broken_breadth.ts"]);
      assert.match(JSON.stringify(runs), /"breadth_1"/);
      // no next_dagrun_* here (docs/api.md, Fields the runner fills): airflowctl says so
      assert.match(next, /No upcoming run scheduled for DAG api_daily/);

      await ctl("dags", "update", "api_slow", "--is-paused");
      assert.equal((await engine.getDag("api_slow")).isPaused, true);
      await ctl("dags", "update", "api_slow", "--no-is-paused");
      assert.equal((await engine.getDag("api_slow")).isPaused, false);
      assert.ok((await engine.listRuns("api_groups", { limit: 1, offset: 0 })).totalEntries > 0);
      await ctl("dags", "delete", "api_groups");
      assert.equal((await engine.listRuns("api_groups", { limit: 1, offset: 0 })).totalEntries, 0, "the DAG's runs are gone");
    });

    group.test("xcom", "XCom: add, get, edit, list, delete on a task instance", async () => {
      const { engine } = harness();
      const listed = await json("xcom", "list", "api_ok", "breadth_1", "first");
      assert.deepEqual(listed.map((x) => x.key), ["return_value"]);
      assert.deepEqual((await json("xcom", "get", "api_ok", "breadth_1", "first", "return_value")).map((x) => x.key), ["return_value"]);
      await ctl("xcom", "add", "api_ok", "breadth_1", "first", "ctl_key", '{"a": 1}');
      assert.deepEqual((await engine.getXCom("api_ok", "breadth_1", "first", "ctl_key")).value, { a: 1 });
      await ctl("xcom", "edit", "api_ok", "breadth_1", "first", "ctl_key", "[1, 2]");
      assert.deepEqual((await engine.getXCom("api_ok", "breadth_1", "first", "ctl_key")).value, [1, 2]);
      await ctl("xcom", "delete", "api_ok", "breadth_1", "first", "ctl_key");
      await assert.rejects(engine.getXCom("api_ok", "breadth_1", "first", "ctl_key"));
    });

    group.test("connections-variables-pools", "connections: create, get, update, list, import, delete; variables import; pools read, exported, every change refused (409)", async () => {
      const { engine } = harness();
      await ctl("connections", "create", "--connection-id", "ctl_conn", "--conn-type", "http", "--host", "h.example", "--port", "8080", "--password", "pw");
      const stored = await engine.getConnection("ctl_conn");
      assert.deepEqual([stored.host, stored.port, stored.password], ["h.example", 8080, "pw"]);
      assert.deepEqual((await json("connections", "get", "ctl_conn")).map((x) => [x.host, x.password]), [["h.example", "***"]]);
      // update sends every field of its body, unset ones as null, and no update_mask: Airflow (and
      // the runner) then sets each, so the port and password it was not given are cleared
      await ctl("connections", "update", "--connection-id", "ctl_conn", "--conn-type", "http", "--host", "h2.example");
      const updated = await engine.getConnection("ctl_conn");
      assert.deepEqual([updated.host, updated.port, updated.password], ["h2.example", null, null]);
      const listed = (await json("connections", "list")).map((x) => x.connection_id);
      assert.ok(listed.includes("ctl_conn") && listed.includes("stand_postgres"), listed.join(", "));
      const file = path.join(home, "connections.json");
      writeFileSync(file, JSON.stringify({ imp_a: { conn_type: "http", host: "a.example" }, imp_b: { conn_type: "ftp", host: "b.example", port: 21 } }));
      assert.match(await ctl("connections", "import", file), /imp_a.*imp_b/);
      assert.deepEqual([(await engine.getConnection("imp_a")).host, (await engine.getConnection("imp_b")).port], ["a.example", 21]);
      await ctl("connections", "delete", "ctl_conn");
      await assert.rejects(engine.getConnection("ctl_conn"));

      const variables = path.join(home, "variables.json");
      writeFileSync(variables, JSON.stringify({ imp_var: "v", imp_desc: { value: { n: 1 }, description: "d" } }));
      await ctl("variables", "import", variables);
      const imported = await engine.getVariable("imp_desc");
      assert.deepEqual([(await engine.getVariable("imp_var")).value, imported.value, imported.description], ["v", '{"n":1}', "d"]);

      const [pools, pool] = await all([() => json("pools", "list"), () => json("pools", "get", "default_pool")]);
      assert.deepEqual(pools?.map((p) => p.name), ["default_pool"]);
      assert.deepEqual(pool?.map((p) => p.name), ["default_pool"]);
      const exported = path.join(home, "pools.json");
      await ctl("pools", "export", exported, "-o", "json");
      const written = JSON.parse(readFileSync(exported, "utf8")) as { name: string; slots: number }[];
      assert.deepEqual(written.map((p) => p.name), ["default_pool"]);
      const refused = await all([
        () => attempt("pools", "create", "--name", "ctl_pool", "--slots", "2"),
        () => attempt("pools", "update", "--pool", "default_pool", "--slots", "3"),
        () => attempt("pools", "delete", "default_pool"),
        () => attempt("pools", "import", exported),
      ]);
      for (const outcome of refused) assert.match(outcome.out, /409 Conflict/, "pools are the runner's: every change is 409");
      assert.equal((await engine.listPools())[0]?.slots, written[0]?.slots, "default_pool unchanged");
    });

    group.test("backfills", "backfills: create, list, get", async () => {
      const { engine } = harness();
      const made = await json("backfill", "create", "--dag-id", "api_daily", "--from-date", "2026-02-01T00:00:00Z", "--to-date", "2026-02-02T00:00:00Z", "--max-active-runs", "1");
      const id = String(made[0]?.id);
      const [listed, one] = await all([() => json("backfill", "list", "api_daily"), () => json("backfill", "get", id)]);
      assert.ok(listed?.some((b) => String(b.id) === id), JSON.stringify(listed));
      assert.deepEqual(one?.map((b) => [b.dag_id, b.max_active_runs]), [["api_daily", "1"]]);
      const runs = await engine.listRuns("api_daily", { limit: 10, offset: 0 });
      assert.ok(runs.items.some((r) => r.runId === "backfill__2026-02-01T00:00:00.000Z"), runs.items.map((r) => r.runId).join(", "));
    });

    group.test("config", "config list, get and lint read the exposed configuration", async () => {
      const port = String(loadStandConfig().postgres.port);
      const [listed, option, lint] = await all([() => attempt("config", "list", "-o", "json"), () => attempt("config", "get", "postgres", "port", "-o", "json"), () => attempt("config", "lint")]);
      assert.equal(listed?.code, 0, `config list: ${listed?.out.slice(-600) ?? ""}`);
      assert.match(String(listed?.out), new RegExp(`"port".*"${port}"`, "s"));
      assert.equal(option?.code, 0, `config get: ${option?.out.slice(-600) ?? ""}`);
      assert.match(String(option?.out), new RegExp(port));
      assert.equal(lint?.code, 0, `config lint: ${lint?.out.slice(-600) ?? ""}`);
    });

    group.test("known-bugs", "airflowctl 0.1.5's own bugs fail as they do (and create-defaults reaches the runner before its crash)", async () => {
      const outcomes = await all(KNOWN_BUGS.map((b) => () => attempt(...b.args)));
      KNOWN_BUGS.forEach((b, i) => {
        const outcome = outcomes[i];
        assert.ok(outcome !== undefined && outcome.code !== 0 && b.prints.test(outcome.out), `airflowctl ${b.args.join(" ")} (${b.bug}) no longer fails so: ${outcome?.out.slice(-800) ?? ""}`);
      });
      const { engine } = harness();
      const logged = async () => (await engine.listEvents({ limit: 1, offset: 0, event: "create_default_connections", patterns: {}, prefixes: {}, orderBy: [] })).totalEntries;
      const earlier = await logged();
      const defaults = await attempt("connections", "create-defaults");
      assert.ok(defaults.code !== 0 && /'NoneType' object has no attribute 'values'/.test(defaults.out), `create-defaults prints its 204 as a dict: ${defaults.out.slice(-600)}`);
      // the event is written once the answer is sent
      await waitUntil("create_default_connections in the event log", async () => (await logged()) === earlier + 1, 5_000);
    });
    group.checkEveryPointHasATest();
  });
}
