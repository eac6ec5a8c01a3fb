// The list cases the official client runs against the run list (test/clients/airflow-client-breadth.test.ts):
// every order_by field of each list, ascending and descending (the fields come from the runner's
// schemas), and every filter of each list's signature, alone and in a few combinations, with
// values that split the rows (a bound on a row's own value, so _gte and _gt differ). The model
// (run-list-model.ts) says what each must answer.
import { duration, type ListCase } from "./run-list-model.ts";
import { HOUR, T0, type RunListData, type SeededRunList } from "./run-list-seed.ts";

export interface OrderFields {
  runs: readonly string[];
  /** Also accepted by GET …/dagRuns (not by the batch body): queued_at, Airflow's older run_after. */
  runAliases: readonly string[];
  taskInstances: readonly string[];
  dags: readonly string[];
}

const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const BOUNDS = ["gte", "gt", "lte", "lt"] as const;

function named(op: ListCase["op"], path: ListCase["path"], args: Record<string, unknown>): ListCase {
  const where = [path.dag_id, path.dag_run_id].filter((p) => p !== undefined).join("/");
  const text = Object.entries(args).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`).join("&");
  return { name: `${op} ${where} ${text}`.replace(/\s+$/, ""), op, path, args };
}

/** The four bounds of a range, each on its own. */
function rangeCases(op: ListCase["op"], path: ListCase["path"], name: string, value: unknown, extra: Record<string, unknown> = {}): ListCase[] {
  return BOUNDS.map((b) => named(op, path, { ...extra, [`${name}_${b}`]: value }));
}

function orderCases(op: ListCase["op"], path: ListCase["path"], fields: readonly string[], asText: boolean, sizeKey: string): ListCase[] {
  return fields.flatMap((f) => [f, `-${f}`].map((key) => named(op, path, { order_by: asText ? key : [key], [sizeKey]: 100 })));
}

/** A value of a task instance's own: the middle one of those that have it. */
function middle(values: (number | null)[]): number {
  const present = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  return present[Math.floor(present.length / 2)] ?? 0;
}

function runCases(orders: OrderFields, seeded: SeededRunList): ListCase[] {
  const op = "get_dag_runs";
  const all = { dag_id: "~" };
  return [
    named(op, all, {}),
    ...orderCases(op, all, [...orders.runs, ...orders.runAliases], false, "limit"),
    named(op, all, { order_by: ["dag_id", "-start_date"] }),
    named(op, all, { order_by: ["-duration", "run_id"] }),
    named(op, all, { order_by: ["state", "-conf"] }),
    ...rangeCases(op, all, "run_after", iso(T0 + 70 * MINUTE)),
    ...rangeCases(op, all, "logical_date", iso(T0 + 11 * HOUR)),
    ...rangeCases(op, all, "start_date", iso(T0 + 92 * MINUTE)),
    ...rangeCases(op, all, "end_date", iso(T0 + 85 * MINUTE + 144_000)),
    ...rangeCases(op, all, "duration", 148),
    ...rangeCases(op, all, "updated_at", seeded.updatedBefore.toISOString()),
    ...rangeCases(op, all, "updated_at", seeded.latestMovedAfter.toISOString()),
    named(op, all, { conf_contains: "t3" }),
    named(op, all, { run_type: ["manual"] }),
    named(op, all, { run_type: ["backfill"] }),
    named(op, all, { run_type: ["operator_triggered", "scheduled"] }),
    named(op, all, { state: ["success", "failed"] }),
    named(op, all, { state: ["queued"] }),
    named(op, all, { dag_version: [1] }),
    named(op, all, { dag_version: [2] }),
    named(op, all, { bundle_version: "v1" }),
    named(op, all, { run_id_pattern: "run_1|RUN_2" }),
    named(op, all, { run_id_pattern: "~" }),
    named(op, all, { run_id_prefix_pattern: "run_0|run_3" }),
    named(op, all, { triggering_user_name_pattern: "LIC" }),
    named(op, all, { triggering_user_name_prefix_pattern: "bo" }),
    named(op, all, { dag_id_pattern: "_A|c" }),
    named(op, all, { dag_id_prefix_pattern: "list_b" }),
    named(op, all, { partition_key_pattern: "x" }),
    named(op, all, { partition_key_prefix_pattern: "x" }),
    named(op, all, { consuming_asset_pattern: "a" }),
    named(op, all, { partition_date_gte: "2026-01-01" }),
    named(op, all, { partition_date_lte: "2026-12-31" }),
    named(op, all, { cursor: "abc" }),
    named(op, all, { cursor: "", order_by: ["run_id"], limit: 5 }),
    named(op, all, { order_by: ["state"], limit: 7, offset: 7 }),
    named(op, all, { order_by: ["state"], limit: 7, offset: 500 }),
    named(op, all, { state: ["success", "failed"], run_after_gte: iso(T0 + 40 * MINUTE), duration_lt: 150, dag_id_pattern: "_A|c", order_by: ["-duration", "run_id"] }),
    named(op, { dag_id: "list_b" }, { conf_contains: "t3", order_by: ["id"] }),
    named(op, { dag_id: "list_d" }, {}),
  ];
}

function runBatchCases(orders: OrderFields): ListCase[] {
  const op = "get_list_dag_runs_batch";
  const all = { dag_id: "~" };
  return [
    named(op, all, {}),
    ...orderCases(op, all, orders.runs, true, "page_limit"),
    named(op, all, { order_by: "-duration, run_id" }),
    named(op, all, { dag_ids: ["list_a", "list_c"], states: ["success", "failed"], order_by: "state,-id" }),
    named(op, all, { states: [null, "running"] }),
    ...rangeCases(op, all, "run_after", iso(T0 + 70 * MINUTE)),
    ...rangeCases(op, all, "logical_date", iso(T0 + 11 * HOUR)),
    ...rangeCases(op, all, "start_date", iso(T0 + 92 * MINUTE)),
    ...rangeCases(op, all, "end_date", iso(T0 + 85 * MINUTE + 144_000)),
    ...rangeCases(op, all, "duration", 148),
    named(op, all, { conf_contains: "t2" }),
    named(op, all, { order_by: "run_id", page_limit: 5, page_offset: 5 }),
    named(op, { dag_id: "list_b" }, { dag_ids: ["list_a", "list_b"] }),
  ];
}

function taskInstanceCases(orders: OrderFields, data: RunListData, seeded: SeededRunList): ListCase[] {
  const op = "get_task_instances";
  const all = { dag_id: "~", dag_run_id: "~" };
  const ended = data.taskInstances;
  return [
    named(op, all, {}),
    ...orderCases(op, all, orders.taskInstances, false, "limit"),
    named(op, all, { order_by: ["-duration", "id"] }),
    named(op, all, { order_by: ["state", "-start_date"] }),
    ...rangeCases(op, all, "run_after", iso(T0 + 70 * MINUTE)),
    ...rangeCases(op, all, "logical_date", iso(T0 + 11 * HOUR)),
    ...rangeCases(op, all, "start_date", iso(T0 + 92 * MINUTE)),
    ...rangeCases(op, all, "end_date", iso(middle(ended.map((t) => t.end_date)) / 1000)),
    ...rangeCases(op, all, "duration", middle(ended.map(duration))),
    ...rangeCases(op, all, "updated_at", seeded.updatedBefore.toISOString()),
    named(op, all, { task_id: "second" }),
    named(op, all, { task_display_name_pattern: "SEC|fir" }),
    named(op, all, { task_display_name_prefix_pattern: "sec" }),
    named(op, all, { task_group_id: "g" }),
    named(op, all, { dag_id_pattern: "list_b|C" }),
    named(op, all, { dag_id_prefix_pattern: "list_a" }),
    named(op, all, { run_id_pattern: "run_0" }),
    named(op, all, { run_id_prefix_pattern: "run_1" }),
    named(op, all, { state: ["success", "failed"] }),
    named(op, all, { pool: ["default_pool"] }),
    named(op, all, { pool: ["etl"] }),
    named(op, all, { pool_name_pattern: "DEFAULT" }),
    named(op, all, { pool_name_prefix_pattern: "default_" }),
    named(op, all, { queue: ["default"] }),
    named(op, all, { queue: ["q2"] }),
    named(op, all, { queue_name_pattern: "FAUL" }),
    named(op, all, { queue_name_prefix_pattern: "def" }),
    named(op, all, { executor: ["CeleryExecutor"] }),
    named(op, all, { version_number: [1] }),
    named(op, all, { try_number: [2] }),
    named(op, all, { try_number: [0, 1] }),
    named(op, all, { operator: ["PythonOperator"] }),
    named(op, all, { operator_name_pattern: "Py" }),
    named(op, all, { operator_name_prefix_pattern: "Py" }),
    named(op, all, { map_index: [-1] }),
    named(op, all, { map_index: [0] }),
    named(op, all, { rendered_map_index_pattern: "x" }),
    named(op, all, { rendered_map_index_prefix_pattern: "x" }),
    named(op, all, { cursor: "abc" }),
    named(op, all, { order_by: ["id"], limit: 10, offset: 20 }),
    named(op, all, { state: ["success", "failed"], try_number: [2], task_display_name_pattern: "SEC|fir", order_by: ["-duration", "id"] }),
    named(op, { dag_id: "list_c", dag_run_id: "~" }, { task_id: "second" }),
    named(op, { dag_id: "list_a", dag_run_id: "run_01" }, {}),
  ];
}

function taskInstanceBatchCases(orders: OrderFields, data: RunListData): ListCase[] {
  const op = "get_task_instances_batch";
  const all = { dag_id: "~", dag_run_id: "~" };
  return [
    named(op, all, {}),
    ...orderCases(op, all, orders.taskInstances, true, "page_limit"),
    named(op, all, { dag_ids: ["list_a"], task_ids: ["second"], state: ["failed"], order_by: "-start_date", page_limit: 100 }),
    named(op, all, { dag_run_ids: ["run_01", "run_14"], order_by: "-id" }),
    named(op, all, { state: [null, "scheduled"] }),
    ...rangeCases(op, all, "run_after", iso(T0 + 70 * MINUTE)),
    ...rangeCases(op, all, "logical_date", iso(T0 + 11 * HOUR)),
    ...rangeCases(op, all, "start_date", iso(T0 + 92 * MINUTE)),
    ...rangeCases(op, all, "end_date", iso(middle(data.taskInstances.map((t) => t.end_date)) / 1000)),
    ...rangeCases(op, all, "duration", middle(data.taskInstances.map(duration))),
    named(op, all, { pool: ["default_pool"] }),
    named(op, all, { pool: ["etl"] }),
    named(op, all, { queue: ["default"] }),
    named(op, all, { executor: ["CeleryExecutor"] }),
    named(op, all, { order_by: "id", page_limit: 10, page_offset: 20 }),
    named(op, { dag_id: "list_a", dag_run_id: "~" }, { dag_ids: ["list_a", "list_b"], task_ids: ["first"] }),
  ];
}

function dagCases(orders: OrderFields): ListCase[] {
  const op = "get_dags";
  const none = {};
  return [
    named(op, none, {}),
    ...orderCases(op, none, orders.dags, false, "limit"),
    named(op, none, { order_by: ["-state", "dag_id"] }),
    named(op, none, { limit: 2, offset: 1 }),
    named(op, none, { tags: ["x"] }),
    named(op, none, { tags_match_mode: "all" }),
    named(op, none, { owners: ["x"] }),
    named(op, none, { dag_id_pattern: "A|_d" }),
    named(op, none, { dag_id_prefix_pattern: "list_c|list_d" }),
    named(op, none, { dag_display_name_pattern: "B" }),
    named(op, none, { dag_display_name_prefix_pattern: "list_" }),
    named(op, none, { exclude_stale: false }),
    named(op, none, { exclude_stale: true }),
    named(op, none, { paused: true }),
    named(op, none, { paused: false }),
    named(op, none, { has_import_errors: true }),
    named(op, none, { has_import_errors: false }),
    named(op, none, { last_dag_run_state: "success" }),
    named(op, none, { last_dag_run_state: "queued" }),
    named(op, none, { bundle_name: "dags-folder" }),
    named(op, none, { bundle_name: "stand-dags" }),
    named(op, none, { bundle_version: "v1" }),
    named(op, none, { has_asset_schedule: true }),
    named(op, none, { has_asset_schedule: false }),
    named(op, none, { asset_dependency: "a" }),
    ...rangeCases(op, none, "dag_run_start_date", iso(T0 + 92 * MINUTE)),
    ...rangeCases(op, none, "dag_run_end_date", iso(T0 + 85 * MINUTE + 144_000)),
    named(op, none, { dag_run_state: ["running"] }),
    named(op, none, { dag_run_state: ["failed"], dag_run_start_date_gte: iso(T0 + 3 * HOUR) }),
    named(op, none, { is_favorite: true }),
    named(op, none, { is_favorite: false }),
    named(op, none, { timetable_type: ["CronTriggerTimetable"] }),
    named(op, none, { timetable_type: ["NullTimetable", "DeltaTriggerTimetable"] }),
  ];
}

export function listCases(data: RunListData, seeded: SeededRunList, orders: OrderFields): ListCase[] {
  return [...runCases(orders, seeded), ...runBatchCases(orders), ...taskInstanceCases(orders, data, seeded), ...taskInstanceBatchCases(orders, data), ...dagCases(orders)];
}
