// What the breadth flow's calls (airflow_client_breadth.py) must have done, as the facts it read back
// through the client, and the database beside them. Every fact is checked and every difference
// reported at once, so one run names each call that does not behave as designed.
import assert from "node:assert/strict";
import { loadStandConfig } from "../../src/config/index.ts";
import { type TestRunnerHandle, withClient } from "../../testkit/runner/runner-db.ts";

export interface BreadthCall {
  call: string;
  op: string;
  ok: boolean;
  dry: boolean;
  /** The HTTP status of an error answer (absent when the call succeeded). */
  status?: number;
  error?: string;
}

export interface ListAnswer {
  name: string;
  ids?: string[];
  total?: number;
  status?: number | null;
  error?: string;
}

export interface BreadthReport {
  calls: BreadthCall[];
  facts: Record<string, unknown>;
  client_ops: string[];
  lists: { signatures: Record<string, string[]>; cases: ListAnswer[] };
}

const ok = (success: string[]) => ({ success, errors: [] });

/** Each fact as the designed behaviour has it (docs/api.md). */
function expectedFacts(): Record<string, unknown> {
  const port = String(loadStandConfig().postgres.port);
  return {
    login: { token_url: "/auth/token", next: "/dags" },
    health: "healthy",
    dag_ids: ["api_daily", "api_fail", "api_groups", "api_ok", "api_slow"],
    details: { timezone: "UTC", params: ["days", "hold"] },
    patch_dag: [true, true],
    patch_dags_paused: [["api_fail", true], ["api_slow", true]],
    paused_after_patch_dags: ["api_fail", "api_slow"],
    paused_after_unpause: [],
    dag_tags: [[], 0],
    tasks: { first: ["second"], second: [] },
    task: ["first", ["second"], 0],
    source_names_dag: true,
    dag_versions: [1],
    dag_version: ["api_ok", 1, "dags-folder"],
    empty_lists: { list_dag_warnings: 0, get_plugins: 0, import_errors: 0, get_providers: 0 },
    import_errors: ["dags/broken_breadth.ts"],
    import_error: ["dags/broken_breadth.ts", "Error: half-written"],
    // favourites per user: the favourite is listed and says so, and unfavourited is gone
    favourites: ["api_ok"],
    details_is_favorite: true,
    favourites_after: [],
    waited: { state: "success", results: { first: { days: 3, try: 1 } } },
    run: ["success", { days: 3 }],
    listed_runs: ["breadth_1"],
    batch_runs: [["api_ok", "breadth_1"]],
    patched_run: ["patched", "success"],
    stats: { queued: 0, running: 0, success: 1, failed: 0 },
    task_states: { first: "success", second: "success" },
    batch_tis: ["second", "first"],
    task_instance: ["first", 1, -1, "first", -1, "success"],
    log_events: ["first runs with days=3"],
    tries: [[1], [1]],
    try_details: [1, "success", 1, -1],
    dependencies: [["Task Instance State"], ["Task Instance State"]],
    extra_links: [{}, 0],
    dry_patch: [["second"], ["second"], "success"],
    noted_by_map_index: "by map index",
    marked: [["second"], "failed", "success"],
    xcom_entries: [["first", "return_value"], ["second", "seen_from_first"]],
    xcom_return_value: { days: 3, try: 1 },
    xcom_created: ["client_key", { n: 1 }, { n: 1 }],
    xcom_updated: [1, 2],
    xcom_found: [["api_ok", "breadth_1", "second", "client_key"]],
    clear_dry: ["second"],
    after_clear: ["success", { first: 1, second: 2 }],
    clear_runs_dry: ["first", "second"],
    cleared_runs: ["breadth_1"],
    after_clear_runs: ["success", "cleared twice", { first: 2, second: 3 }],
    clear_tis_dry: ["second"],
    cleared_tis: ["second"],
    after_clear_tis: ["success", 4],
    after_ti_delete: ["first"],
    bulk_runs_created: { create: ok(["api_ok/bulk_a", "api_ok/bulk_b"]) },
    bulk_runs_ended: ["success", "success"],
    bulk_runs_changed: { update: ok(["api_ok/bulk_a"]), delete: ok(["api_ok/bulk_b"]) },
    bulk_a_note: "noted in bulk",
    bulk_tis: {
      update: ok(["first"]),
      delete: ok(["second"]),
      create: { success: [], errors: [{ error: "task instances are made by their run: trigger or clear a run instead", status_code: 400 }] },
    },
    bulk_tis_after: ["ti noted in bulk", ["first"]],
    groups_run: "success",
    group_dry: ["grp.a", "grp.b", "grp.inner.c"],
    group_inner_dry: ["grp.inner.c"],
    group_states_after_dry: { "grp.a": "success", "grp.b": "success", "grp.inner.c": "success", "grpx.d": "success", after: "success" },
    group_marked: ["grp.a", "grp.b", "grp.inner.c"],
    group_states: { "grp.a": "failed", "grp.b": "failed", "grp.inner.c": "failed", "grpx.d": "success", after: "success" },
    fail_run: "failed",
    after_delete_dag: [0, "api_fail"],
    variable: ['{"n":1}', "from the client"],
    patched_variable: ["two", "from the client"],
    bulk_variables: { create: ok(["breadth_a"]), delete: ok(["breadth_a"]) },
    variables: ["breadth_var"],
    pools: [["default_pool", 4]],
    pool: ["default_pool", 4, 4],
    pools_after: [["default_pool", 4]],
    jobs: [["SchedulerJob", "running", null]],
    config_value: [["postgres", [["port", port]]]],
    connection_made: ["client_conn", "***", "h.example"],
    connection: ["http", "h.example", 8080, "***"],
    connection_patched: ["h2.example", 8080],
    bulk_connections: { create: ok(["client_b"]), update: ok(["client_conn"]), delete: ok(["client_b"]) },
    connections: [["client_conn", "bulk"]],
    connection_test_queued: ["stand_runner_db", "success"],
    connection_test_outcome: ["stand_runner_db", "success"],
    backfill_dry: ["2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00", "2026-01-03T00:00:00+00:00"],
    backfill: ["api_daily", 1, false],
    backfill_steps: [true, false, true],
    // the DAG was paused: the one run the backfill made (max_active_runs 1) waited queued and the cancel failed it
    backfill_runs: [["backfill__2026-01-01T00:00:00.000Z", "failed"]],
  };
}

export async function assertFacts(facts: Record<string, unknown>, engine: TestRunnerHandle, apiOkFileloc: string): Promise<void> {
  const differences: string[] = [];
  const check = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      differences.push(`${what}: ${err instanceof Error ? err.message.split("\n").slice(0, 12).join("\n") : String(err)}`);
    }
  };
  for (const [key, want] of Object.entries(expectedFacts())) check(key, () => assert.deepEqual(facts[key], want));

  const cfg = loadStandConfig().postgres;
  check("version", () => assert.match(String(facts.version), /^3\.3\.2\+stand/));
  check("logout", () => assert.match(String(facts.logout), /token/));
  check("triggered", () => assert.deepEqual((facts.triggered as unknown[]).filter((_, i) => i !== 1), ["breadth_1", "from the breadth flow", "tester"]));
  check("config", () => {
    const postgres = (facts.config as Record<string, Record<string, string>>).postgres ?? {};
    assert.deepEqual([postgres.port, postgres.user, postgres.password], [String(cfg.port), cfg.user, "< hidden >"]);
  });
  check("connection_test", () => assert.deepEqual([(facts.connection_test as unknown[])[0], /Postgres/.test(String((facts.connection_test as unknown[])[1]))], [true, true]));
  check("backfills", () => {
    const [listed, made] = facts.backfills as number[];
    assert.equal(listed, made, "list_backfills lists the backfill create_backfill made");
  });

  // what the database says of the flow's changes
  const db = engine.db;
  const requests = await withClient(db, async (client) => (await client.query<{ fileloc: string; requested_by: string }>("select fileloc, requested_by from runner.dag_parse_requests")).rows);
  check("reparse_dag_file", () => assert.deepEqual(requests, [{ fileloc: apiOkFileloc, requested_by: "api:rest:user:tester" }]));
  const gone = async (what: string, read: () => Promise<unknown>) => {
    const outcome = await read().then(
      () => "still there",
      () => "gone",
    );
    check(what, () => assert.equal(outcome, "gone"));
  };
  await gone("delete_variable", () => engine.runner.getVariable("breadth_var"));
  await gone("delete_connection", () => engine.runner.getConnection("client_conn"));
  await gone("delete_dag_run", () => engine.runner.getRun("api_ok", "bulk_a"));
  const tis = await engine.runner.listTaskInstances("api_ok", "breadth_1");
  check("delete_task_instance", () => assert.deepEqual(tis.map((t) => t.taskId), ["first"]));
  const failRuns = await engine.runner.listRuns("api_fail", { limit: 10, offset: 0 });
  check("delete_dag", () => assert.equal(failRuns.totalEntries, 0));
  assert.deepEqual(differences, [], `${differences.length} facts differ from the designed behaviour:\n${differences.join("\n")}`);
}
