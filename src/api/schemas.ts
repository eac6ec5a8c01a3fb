// Zod schemas of every request, in Airflow's public API v2 field names (the responses are in
// responses.ts, re-exported here). They validate input and become the OpenAPI document's components.
import { z } from "zod";
import { type JsonValue, RUN_STATES, TASK_STATES, VARIABLE_SORT_FIELDS } from "../runner/index.ts";
import { isoDate } from "./responses.ts";

// Identifiers: ASCII only, no slashes or control characters, bounded length. Run ids may carry the
// ':' '+' of an ISO timestamp (Airflow's manual__2024-01-01T00:00:00+00:00).
const ID_MAX = 250;
export const dagIdSchema = z
  .string()
  .max(ID_MAX, `must be at most ${ID_MAX} characters`)
  .regex(/^[A-Za-z0-9_.-]+$/, "may contain only letters, digits, '_', '.' and '-'")
  .refine((id) => !/^\.+$/.test(id), "must not be only dots (it could not be addressed in a URL)");
export const runIdSchema = z
  .string()
  .max(ID_MAX, `must be at most ${ID_MAX} characters`)
  .regex(/^[A-Za-z0-9_.:+~-]+$/, "may contain only letters, digits and _ . : + ~ -")
  .refine((id) => !/^\.+$/.test(id), "must not be only dots (it could not be addressed in a URL)");
export const taskIdSchema = dagIdSchema;
export const variableKeySchema = dagIdSchema;

// Postgres has no year 0 and JavaScript dates end in 275760: keep input dates in a sane range. The
// zone may be written without its colon (+0000), as Python's strftime %z writes it, and so the
// official client sends every date of a query.
export const inputIsoDate = z
  .string()
  .transform((text) => text.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"))
  .pipe(
    isoDate.refine((text) => {
      const year = new Date(text).getUTCFullYear();
      return year >= 1900 && year <= 9999;
    }, "must be between the years 1900 and 9999"),
  );

export const dagPathParams = z.object({ dag_id: dagIdSchema }).strict();
export const runPathParams = z.object({ dag_id: dagIdSchema, dag_run_id: runIdSchema }).strict();
export const taskPathParams = runPathParams.extend({ task_id: taskIdSchema }).strict();
export const logPathParams = taskPathParams
  .extend({ try_number: z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(1, "try numbers start at 1").max(1_000_000) })
  .strict();
export const variablePathParams = z.object({ variable_key: variableKeySchema }).strict();

/** A whole number as a path or query parameter (version numbers, import error ids: Postgres integers). */
const idNumber = z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(1, "must be at least 1").max(2_147_483_647);
export const dagVersionPathParams = z.object({ dag_id: dagIdSchema, version_number: idNumber }).strict();
export const importErrorPathParams = z.object({ import_error_id: idNumber }).strict();
export const fileTokenPathParams = z.object({ file_token: z.string().min(1).max(2000).describe("a DAG's file_token") }).strict();

/** An empty query value (?limit=, as airflowctl sends an unset option) reads as absent. */
export const blankIsAbsent = (value: unknown) => (value === "" ? undefined : value);

export function limitParam(defaultLimit: number) {
  return z.preprocess(
    blankIsAbsent,
    z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(1, "must be at least 1").max(1000, "must be at most 1000").default(defaultLimit),
  );
}

export const pageQuery = z
  .object({
    limit: limitParam(100),
    offset: z.preprocess(
      blankIsAbsent,
      z.coerce
        .number({ error: "must be a number" })
        .int("must be a whole number")
        .min(0, "must not be negative")
        .max(1_000_000_000, "must be at most 1000000000")
        .default(0),
    ),
  })
  .strict();

/** The page `offset`/`limit` ask for, of a list a route holds whole (the total is then the list's length). */
export function pageOf<T>(all: readonly T[], query: { offset: number; limit: number }): T[] {
  return all.slice(query.offset, query.offset + query.limit);
}

/** A query parameter that may be given once or repeated (?state=a&state=b), as Airflow's lists. */
export function oneOrMany<T extends z.ZodType>(item: T) {
  return z.preprocess((value) => (value === undefined || Array.isArray(value) ? value : [value]), z.array(item));
}

export const queryBoolean = z.enum(["true", "false"], { error: "must be true or false" }).transform((v) => v === "true");



export const logQuery = z
  .object({
    full_content: queryBoolean.optional().describe("accepted for Airflow's clients; the whole log is always sent"),
    map_index: z.coerce.number({ error: "must be a number" }).int().refine((n) => n === -1, "must be -1: tasks are not mapped here").optional(),
    token: z.string().max(2000).optional().describe("the continuation_token of an earlier answer: read on from there"),
  })
  .strict();

export const importErrorsQuery = pageQuery
  .extend({
    limit: limitParam(50),
    order_by: oneOrMany(z.enum(["id", "-id", "import_error_id", "-import_error_id", "timestamp", "-timestamp", "filename", "-filename"])).optional(),
    filename: z.string().max(2000).optional().describe("only the import error of this file (dags/<file>.ts)"),
    filename_pattern: z.string().max(2000).optional().describe("case-insensitive substring of the file name, % and _ wildcards"),
    filename_prefix_pattern: z.string().max(2000).optional().describe("case-sensitive prefix of the file name"),
    bundle_name: z.string().max(250).optional().describe("only this bundle's: the DAG folder (dags-folder, stand-dags)"),
  })
  .strict();

const VERSION_ORDER = ["id", "-id", "version_number", "-version_number"] as const;

export const dagVersionsQuery = pageQuery
  .extend({
    limit: limitParam(50),
    version_number: idNumber.optional().describe("only this version"),
    bundle_name: z.string().max(250).optional().describe("only the versions parsed from this DAG folder (dags-folder, stand-dags)"),
    bundle_version: z.preprocess(blankIsAbsent, z.string().max(250).optional()).describe("every version's bundle_version is null: any value gives an empty page"),
    order_by: oneOrMany(z.enum(VERSION_ORDER))
      .default(["id"])
      .describe("oldest first, '-' for newest first; id orders as version_number (the order versions were made in)"),
  })
  .strict();

export const dagStatsQuery = z.object({ dag_ids: oneOrMany(dagIdSchema).optional() }).strict();

export const dagSourceQuery = z
  .object({ version_number: z.preprocess(blankIsAbsent, idNumber.optional()).describe("the version whose source to answer (the latest when absent)") })
  .strict();

export const waitQuery = z
  .object({
    interval: z.coerce
      .number({ error: "must be a number of seconds" })
      .positive("must be more than 0")
      .max(3600, "must be at most 3600 seconds")
      .optional()
      .describe("Airflow's form: the state is streamed as NDJSON, a line every `interval` seconds until the run ends (the last line as soon as it does)"),
    result: oneOrMany(taskIdSchema).optional().describe("task ids whose return value (XCom return_value) the last line carries as `results`"),
    timeout: z.coerce
      .number({ error: "must be a number of seconds" })
      .min(0, "must not be negative")
      .max(3600, "must be at most 3600 seconds")
      .optional()
      .describe("extension: stop waiting after this many seconds (default 60 without interval, none with it)"),
  })
  .strict();

export const triggerRunBody = z
  .object({
    dag_run_id: runIdSchema.nullable().optional(),
    logical_date: inputIsoDate.nullable().optional().describe("required-but-nullable in Airflow 3; may be omitted here"),
    conf: z.record(z.string(), z.unknown()).nullable().optional(),
    note: z.string().max(10_000).nullable().optional(),
    data_interval_start: z.null({ error: "data intervals are not supported: leave it null" }).optional(),
    data_interval_end: z.null({ error: "data intervals are not supported: leave it null" }).optional(),
    run_after: z.null({ error: "a run starts when it is triggered: leave run_after null" }).optional(),
    partition_key: z.null({ error: "partitions are not supported: leave it null" }).optional(),
  })
  .strict();

export const dagPatchBody = z.object({ is_paused: z.boolean() }).strict();

export const dagPatchQuery = z
  .object({ update_mask: oneOrMany(z.literal("is_paused", { error: "only is_paused can be changed" })).optional() })
  .strict();

/** Airflow's PatchTaskInstanceBody: a task instance marked success, failed or skipped, and/or its note. */
export const patchTaskInstanceBody = z
  .object({
    new_state: z
      .enum(["success", "failed", "skipped"], { error: "must be one of success, failed, skipped" })
      .nullable()
      .optional()
      .describe("success or skipped lets its downstream go on; failed ends an open run as failed"),
    note: z.string().max(1000).nullable().optional(),
    include_upstream: z.literal(false, { error: "not supported: mark each task instance on its own" }).default(false),
    include_downstream: z.literal(false, { error: "not supported: mark each task instance on its own" }).default(false),
    include_future: z.literal(false, { error: "not supported: runs have no order in time here" }).default(false),
    include_past: z.literal(false, { error: "not supported: runs have no order in time here" }).default(false),
  })
  .strict();

export const patchTaskInstanceQuery = z
  .object({
    map_index: z.coerce.number({ error: "must be a number" }).int().refine((n) => n === -1, "must be -1: tasks are not mapped here").optional(),
    update_mask: oneOrMany(z.enum(["new_state", "note"])).optional(),
  })
  .strict();

export const loginBody = z.object({ username: z.string().min(1).max(200), password: z.string().min(1).max(1000) }).strict();

/** Airflow's DAGRunPatchBody: a run marked failed or success, and/or its note. */
export const dagRunPatchBody = z
  .object({
    state: z
      .enum(["queued", "success", "failed"])
      .optional()
      .describe("success or failed ends the run (and its open child runs) in that state; queued is refused: clear task instances instead"),
    note: z.string().max(10_000).nullable().optional(),
  })
  .strict();

export const dagRunPatchQuery = z
  .object({
    update_mask: oneOrMany(z.enum(["state", "note"])).optional().describe("which fields of the body to apply (all present ones when omitted)"),
  })
  .strict();

/** Airflow's ClearTaskInstancesBody, the subset with a meaning here (one run at a time). */
export const clearTaskInstancesBody = z
  .object({
    dry_run: z.boolean().default(true).describe("Airflow's default: only list what would be cleared"),
    dag_run_id: runIdSchema.nullable().optional().describe("required here: clears act on one run"),
    task_ids: z
      .array(
        z.union([
          z.string().min(1).max(250),
          z.tuple([z.string().min(1).max(250), z.literal(-1, { error: "map_index must be -1: tasks are not mapped here" })]),
        ]),
      )
      .nullable()
      .optional()
      .describe("task ids, or Airflow's [task_id, map_index] pairs (map_index -1)"),
    only_failed: z.boolean().default(true),
    only_running: z.literal(false).default(false).describe("clearing running task instances is not supported"),
    include_upstream: z.boolean().default(false),
    include_downstream: z.boolean().default(false),
    include_future: z.literal(false).default(false),
    include_past: z.literal(false).default(false),
    reset_dag_runs: z.boolean().default(true),
    start_date: inputIsoDate.nullable().optional(),
    end_date: inputIsoDate.nullable().optional(),
    run_on_latest_version: z
      .boolean()
      .nullable()
      .optional()
      .describe("move the ended run onto the DAG's latest version first: tasks it no longer has end removed, new ones run (409 for a run not ended); otherwise a cleared run keeps the version it was made from"),
    prevent_running_task: z.boolean().default(false).describe("accepted; running task instances are never cleared here"),
    note: z.string().max(1000).nullable().optional().describe("set as the run's note when the clear is not dry"),
  })
  .strict();

const jsonishValue = z
  .union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())])
  .describe("a string is stored as is; any other JSON value is stored as its JSON text");

export const variableBody = z
  .object({
    key: variableKeySchema,
    value: jsonishValue,
    description: z.string().max(10_000).nullable().optional(),
    team_name: z.null({ error: "teams are not supported: leave team_name null" }).optional(),
  })
  .strict();

const bulkCreateAction = z
  .object({
    action: z.literal("create"),
    entities: z.array(variableBody).max(1000),
    action_on_existence: z.enum(["fail", "skip", "overwrite"]).default("fail"),
  })
  .strict();
const bulkUpdateAction = z
  .object({
    action: z.literal("update"),
    entities: z.array(variableBody).max(1000),
    update_mask: z.array(z.enum(["value", "description"])).nullable().optional(),
    action_on_non_existence: z.enum(["fail", "skip"]).default("fail"),
  })
  .strict();
const bulkDeleteAction = z
  .object({
    action: z.literal("delete"),
    entities: z.array(z.union([variableKeySchema, variableBody])).max(1000),
    action_on_non_existence: z.enum(["fail", "skip"]).default("fail"),
  })
  .strict();

/** Airflow's BulkBody[VariableBody]: create, update and delete actions, applied in order. */
export const bulkVariablesBody = z
  .object({ actions: z.array(z.discriminatedUnion("action", [bulkCreateAction, bulkUpdateAction, bulkDeleteAction])).max(100) })
  .strict();
export type BulkVariablesBody = z.output<typeof bulkVariablesBody>;

export const variablePatchBody = z
  .object({
    key: variableKeySchema.optional().describe("if present, must equal the key in the path"),
    value: jsonishValue.optional(),
    description: z.string().max(10_000).nullable().optional(),
    team_name: z.null({ error: "teams are not supported: leave team_name null" }).optional(),
  })
  .strict();

export const variablePatchQuery = z
  .object({
    update_mask: z
      .union([z.string(), z.array(z.string())])
      .optional()
      .describe("comma-separated or repeated list of fields to update: value, description"),
  })
  .strict();

export * from "./responses.ts";

// GET /api/v2/system/schema: the world's schema status (computed by src/world/schema-status.ts).
const checksum = z.string().nullable();
export const schemaStatusResponse = z.object({
  status: z.enum(["in_sync", "drift", "no_build"]),
  drift: z.boolean().describe("true when any file is changed, new or removed against the world's build"),
  world_position: z.string().nullable(),
  build: z
    .object({ dag_id: z.string(), dag_run_id: z.string(), applied_at: z.string(), server_version: z.string() })
    .nullable()
    .describe("the run whose applied DDL is the world's build (the latest run that applied DDL)"),
  summary: z.object({ unchanged: z.number().int(), changed: z.number().int(), new: z.number().int(), removed: z.number().int() }),
  files: z.array(
    z.object({
      file: z.string(),
      drift: z.enum(["changed", "new", "removed"]).nullable(),
      current_checksum: checksum.describe("sha256 of the file in sql/ddl/ now; null when removed"),
      built_checksum: checksum.describe("sha256 the world was built with; null when never applied"),
      applied_at: z.string().nullable(),
      dag_run_id: z.string().nullable(),
      task_id: z.string().nullable(),
      server_version: z.string().nullable(),
    }),
  ),
  catalogue: z
    .object({
      recorded_by_run: z.string().nullable(),
      nodes_checked: z.array(z.string()),
      unreachable: z.record(z.string(), z.string()),
      missing: z.array(
        z.object({
          kind: z.enum(["missing_database", "missing_table", "missing_column", "changed_type"]),
          node: z.string(),
          name: z.string(),
          detail: z.string(),
        }),
      ),
    })
    .describe("the live system.columns of every node against the catalogue the world was built with; anything missing is drift"),
  platform: z.object({
    node: z.string(),
    version: z.string().nullable(),
    has_sql_roles: z.boolean().nullable(),
    has_json_functions: z.boolean().nullable(),
    has_date_time64: z.boolean().nullable(),
    has_sql_dictionaries: z.boolean().nullable(),
    error: z.string().nullable(),
  }),
  note: z.string(),
});
export type SchemaStatusResponse = z.infer<typeof schemaStatusResponse>;

// ---- Airflow's list filters (runs across DAGs, task instances across runs) -------------------

/** A DAG id in a list path, or Airflow's `~`: every DAG. */
export const dagIdOrAll = z.union([z.literal("~"), dagIdSchema]);
export const dagOrAllPathParams = z.object({ dag_id: dagIdOrAll }).strict();

const RANGE_BOUNDS = ["gte", "gt", "lte", "lt"] as const;
type RangeBound = (typeof RANGE_BOUNDS)[number];
type RangeShape<N extends string, T extends z.ZodType> = { [K in `${N}_${RangeBound}`]: z.ZodOptional<T> };

/** Airflow's four bounds of one field (`run_after_gte`, `run_after_gt`, …). */
function rangeShape<N extends string, T extends z.ZodType>(name: N, schema: T): RangeShape<N, T> {
  return Object.fromEntries(RANGE_BOUNDS.map((b) => [`${name}_${b}`, schema.optional()])) as RangeShape<N, T>;
}

/** The bounds of one field, read back from a parsed query or body. */
export function rangeOf<N extends string, T>(input: { [K in `${N}_${RangeBound}`]?: T | null }, name: N): { gte?: T; gt?: T; lte?: T; lt?: T } | undefined {
  const range: { gte?: T; gt?: T; lte?: T; lt?: T } = {};
  for (const b of RANGE_BOUNDS) {
    const value = input[`${name}_${b}`];
    if (value !== undefined && value !== null) range[b] = value;
  }
  return Object.keys(range).length === 0 ? undefined : range;
}

const queryDate = z.preprocess(blankIsAbsent, inputIsoDate.transform((text) => new Date(text)));
const queryNumber = z.preprocess(blankIsAbsent, z.coerce.number({ error: "must be a number" }).finite());
const queryText = z.preprocess(blankIsAbsent, z.string().max(1000).optional());
const patternText = queryText.describe("case-insensitive substring (SQL ILIKE): % and _ are wildcards, | separates alternatives");
const prefixText = queryText.describe("case-sensitive prefix, taken literally; | separates alternatives");

/** Airflow's get_variables: order_by and the key's two patterns. */
export const variablesQuery = pageQuery
  .extend({
    order_by: oneOrMany(
      z.enum([...VARIABLE_SORT_FIELDS, ...VARIABLE_SORT_FIELDS.map((f) => `-${f}` as const)], {
        error: `sorts by ${VARIABLE_SORT_FIELDS.join(", ")} (a leading - for descending)`,
      }),
    ).optional(),
    variable_key_pattern: patternText,
    variable_key_prefix_pattern: prefixText,
  })
  .strict();

export const RUN_ORDER_FIELDS = [
  "id", "state", "dag_id", "run_id", "logical_date", "partition_date", "run_after", "start_date", "end_date", "updated_at", "conf", "duration", "dag_run_id",
] as const;
const runOrderValue = z.enum([...RUN_ORDER_FIELDS, ...RUN_ORDER_FIELDS.map((f) => `-${f}` as const), "queued_at", "-queued_at"]);

/** Airflow's run types; `operator_triggered` is a waiting trigger's child run here. */
export const AIRFLOW_RUN_TYPES = ["backfill", "scheduled", "manual", "operator_triggered", "asset_triggered", "asset_materialization"] as const;

const runRanges = {
  ...rangeShape("run_after", queryDate),
  ...rangeShape("logical_date", queryDate),
  ...rangeShape("start_date", queryDate),
  ...rangeShape("end_date", queryDate),
  ...rangeShape("duration", queryNumber),
};

export const listRunsQuery = pageQuery
  .extend({
    ...runRanges,
    ...rangeShape("updated_at", queryDate),
    partition_date_gte: queryText.describe("no run has a partition here: any value matches none"),
    partition_date_lte: queryText.describe("no run has a partition here: any value matches none"),
    cursor: z
      .preprocess(blankIsAbsent, z.undefined({ error: "cursor paging is not served here: page with limit and offset" }).optional())
      .describe("refused: page with limit and offset"),
    conf_contains: queryText.describe("runs whose conf, as JSON text, contains this string"),
    run_type: oneOrMany(z.enum(AIRFLOW_RUN_TYPES)).optional(),
    state: oneOrMany(z.enum(RUN_STATES)).optional().describe("only runs in these states (repeat the parameter for several)"),
    dag_version: oneOrMany(idNumber).optional().describe("only runs made from these version numbers"),
    bundle_version: queryText.describe("no bundle is versioned here: any value matches none"),
    order_by: oneOrMany(runOrderValue)
      .default(["-id"])
      .describe("several keys; '-' for descending. The default is newest first (-id); queued_at is run_after"),
    run_id_pattern: patternText,
    run_id_prefix_pattern: prefixText,
    triggering_user_name_pattern: patternText,
    triggering_user_name_prefix_pattern: prefixText,
    dag_id_pattern: patternText.describe("with ~ as dag_id: runs of the DAGs whose id matches (ILIKE, | for or)"),
    dag_id_prefix_pattern: prefixText,
    partition_key_pattern: queryText.describe("no run has a partition key here: any value matches none"),
    partition_key_prefix_pattern: queryText.describe("no run has a partition key here: any value matches none"),
    consuming_asset_pattern: queryText.describe("no assets here: any value matches none"),
  })
  .strict();
export type ListRunsQueryInput = z.infer<typeof listRunsQuery>;

/** Airflow's DAGRunsBatchBody (POST /dags/~/dagRuns/list). */
export const dagRunsBatchBody = z
  .object({
    ...rangeShape("run_after", inputIsoDate.nullable().transform((t) => (t === null ? null : new Date(t)))),
    ...rangeShape("logical_date", inputIsoDate.nullable().transform((t) => (t === null ? null : new Date(t)))),
    ...rangeShape("start_date", inputIsoDate.nullable().transform((t) => (t === null ? null : new Date(t)))),
    ...rangeShape("end_date", inputIsoDate.nullable().transform((t) => (t === null ? null : new Date(t)))),
    ...rangeShape("duration", z.number().finite().nullable()),
    order_by: z.string().max(200).nullable().optional().describe("one key or several, comma separated; '-' for descending"),
    page_offset: z.number().int().min(0).max(1_000_000_000).default(0),
    page_limit: z.number().int().min(1).max(1000).default(100),
    dag_ids: z.array(dagIdSchema).max(1000).nullable().optional(),
    states: z.array(z.enum(RUN_STATES).nullable()).max(10).nullable().optional(),
    conf_contains: z.string().max(1000).nullable().optional(),
  })
  .strict();

export const TASK_INSTANCE_ORDER_FIELDS = [
  "id", "state", "duration", "start_date", "end_date", "map_index", "try_number", "logical_date", "run_after",
  "data_interval_start", "data_interval_end", "rendered_map_index", "operator",
] as const;
const taskInstanceOrderValue = z.enum([...TASK_INSTANCE_ORDER_FIELDS, ...TASK_INSTANCE_ORDER_FIELDS.map((f) => `-${f}` as const)]);
const queryInt = z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(-1).max(2_147_483_647);

/** GET …/dagRuns/{dag_run_id}/taskInstances (dag_id and dag_run_id may be ~). */
export const taskInstancesQuery = pageQuery
  .extend({
    limit: limitParam(1000),
    ...runRanges,
    ...rangeShape("updated_at", queryDate),
    cursor: z
      .preprocess(blankIsAbsent, z.undefined({ error: "cursor paging is not served here: page with limit and offset" }).optional())
      .describe("refused: page with limit and offset"),
    task_id: queryText.describe("only this task"),
    task_display_name_pattern: patternText.describe("on the task id (a task's display name is its id)"),
    task_display_name_prefix_pattern: prefixText,
    task_group_id: queryText.describe("no task groups here: any value matches none"),
    dag_id_pattern: patternText,
    dag_id_prefix_pattern: prefixText,
    run_id_pattern: patternText,
    run_id_prefix_pattern: prefixText,
    state: oneOrMany(z.enum(TASK_STATES)).optional(),
    pool: oneOrMany(z.string().max(250)).optional().describe("every task instance is in default_pool"),
    pool_name_pattern: patternText,
    pool_name_prefix_pattern: prefixText,
    queue: oneOrMany(z.string().max(250)).optional().describe("every task instance is in the default queue"),
    queue_name_pattern: patternText,
    queue_name_prefix_pattern: prefixText,
    executor: oneOrMany(z.string().max(250)).optional().describe("no executors here: any value matches none"),
    version_number: oneOrMany(idNumber).optional().describe("only task instances of runs made from these versions"),
    try_number: oneOrMany(queryInt).optional(),
    operator: oneOrMany(z.string().max(250)).optional().describe("no operator classes here: any value matches none"),
    operator_name_pattern: queryText.describe("no operator classes here: any value matches none"),
    operator_name_prefix_pattern: queryText.describe("no operator classes here: any value matches none"),
    map_index: oneOrMany(queryInt).optional().describe("tasks are not mapped: every map_index is -1"),
    rendered_map_index_pattern: queryText.describe("tasks are not mapped: any value matches none"),
    rendered_map_index_prefix_pattern: queryText.describe("tasks are not mapped: any value matches none"),
    order_by: oneOrMany(taskInstanceOrderValue).default([]).describe("several keys; '-' for descending. The default: by run, then each run's task order"),
  })
  .strict();
export type TaskInstancesQueryInput = z.infer<typeof taskInstancesQuery>;

const bodyDate = inputIsoDate.nullable().transform((t) => (t === null ? null : new Date(t)));

/** Airflow's TaskInstancesBatchBody (POST …/taskInstances/list). */
export const taskInstancesBatchBody = z
  .object({
    dag_ids: z.array(dagIdSchema).max(1000).nullable().optional(),
    dag_run_ids: z.array(runIdSchema).max(1000).nullable().optional(),
    task_ids: z.array(taskIdSchema).max(1000).nullable().optional(),
    state: z.array(z.enum(TASK_STATES).nullable()).max(20).nullable().optional(),
    ...rangeShape("run_after", bodyDate),
    ...rangeShape("logical_date", bodyDate),
    ...rangeShape("start_date", bodyDate),
    ...rangeShape("end_date", bodyDate),
    ...rangeShape("duration", z.number().finite().nullable()),
    pool: z.array(z.string().max(250)).max(100).nullable().optional(),
    queue: z.array(z.string().max(250)).max(100).nullable().optional(),
    executor: z.array(z.string().max(250)).max(100).nullable().optional(),
    page_offset: z.number().int().min(0).max(1_000_000_000).default(0),
    page_limit: z.number().int().min(1).max(1000).default(100),
    order_by: z.string().max(200).nullable().optional().describe("one key or several, comma separated; '-' for descending"),
  })
  .strict();

const XCOM_ORDER_FIELDS = ["key", "dag_id", "run_id", "task_id", "map_index", "timestamp", "run_after"] as const;
const xcomOrderValue = z.enum([...XCOM_ORDER_FIELDS, ...XCOM_ORDER_FIELDS.map((f) => `-${f}` as const)]);
const mapIndexQuery = z.preprocess(blankIsAbsent, z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(-1, "must be -1 or more").optional());
/** Any JSON value (the body is parsed JSON, so whatever arrived is one); undefined means absent. */
const jsonValue = z.custom<JsonValue>((v) => v !== undefined, { error: "is required (any JSON value, null too)" });
export const xcomKeySchema = z.string().min(1, "must not be empty").max(512, "must be at most 512 characters");

export const xcomListPathParams = z.object({ dag_id: dagIdOrAll, dag_run_id: z.union([z.literal("~"), runIdSchema]), task_id: z.union([z.literal("~"), taskIdSchema]) }).strict();
export const xcomPathParams = taskPathParams.extend({ xcom_key: xcomKeySchema }).strict();

/** Airflow's GET …/taskInstances/{task_id}/xcomEntries parameters. */
export const xcomListQuery = pageQuery
  .extend({
    limit: limitParam(50),
    xcom_key: queryText,
    map_index: mapIndexQuery.describe("no task is mapped here: -1 or absent keeps every entry, another index matches none"),
    map_index_filter: mapIndexQuery.describe("as map_index"),
    ...rangeShape("logical_date", queryDate),
    ...rangeShape("run_after", queryDate),
    xcom_key_pattern: patternText,
    xcom_key_prefix_pattern: prefixText,
    dag_display_name_pattern: patternText,
    dag_display_name_prefix_pattern: prefixText,
    run_id_pattern: patternText,
    run_id_prefix_pattern: prefixText,
    task_id_pattern: patternText,
    task_id_prefix_pattern: prefixText,
    order_by: oneOrMany(xcomOrderValue).default(["dag_id", "task_id", "run_id", "map_index", "key"]).describe("several keys; '-' for descending"),
  })
  .strict();

export const xcomEntryQuery = z
  .object({
    map_index: mapIndexQuery.default(-1),
    deserialize: z.preprocess(blankIsAbsent, queryBoolean.optional()).describe("values are JSON here: the same value either way"),
    stringify: z.preprocess(blankIsAbsent, queryBoolean.optional()).describe("true: the value as its JSON text"),
  })
  .strict();

export const xcomCreateBody = z
  .object({ key: xcomKeySchema, value: jsonValue, map_index: z.literal(-1, { error: "no task is mapped here: map_index is -1" }).default(-1) })
  .strict();
export const xcomUpdateBody = z
  .object({ value: jsonValue, map_index: z.literal(-1, { error: "no task is mapped here: map_index is -1" }).default(-1) })
  .strict();

export const DAG_ORDER_FIELDS = ["dag_id", "dag_display_name", "next_dagrun", "state", "start_date", "last_run_state", "last_run_start_date"] as const;
const dagOrderValue = z.enum([...DAG_ORDER_FIELDS, ...DAG_ORDER_FIELDS.map((f) => `-${f}` as const)]);
const booleanQuery = z.preprocess(blankIsAbsent, queryBoolean.optional());

/** The DAG selection Airflow's GET /dags and PATCH /dags share. */
const dagSelection = {
  tags: oneOrMany(z.string().max(250)).optional().describe("no DAG has tags here: any tag matches none"),
  tags_match_mode: z.enum(["any", "all"]).optional(),
  owners: oneOrMany(z.string().max(250)).optional().describe("no DAG names owners here: any owner matches none"),
  dag_id_pattern: z.string().max(250).optional().describe("Airflow's pattern: case-insensitive substring, % and _ wildcards, | for or"),
  dag_id_prefix_pattern: z.string().max(250).optional().describe("case-sensitive prefix, | for or"),
  exclude_stale: z
    .enum(["true", "false"], { error: "must be true or false" })
    .default("true")
    .transform((v) => v === "true")
    .describe("leave out stale DAGs (Airflow's default: true)"),
  paused: booleanQuery.describe("only paused (true) or unpaused (false) DAGs"),
};

export const listDagsQuery = pageQuery
  .extend({
    ...dagSelection,
    dag_display_name_pattern: z.string().max(250).optional().describe("as dag_id_pattern (a DAG's display name is its id)"),
    dag_display_name_prefix_pattern: z.string().max(250).optional(),
    has_import_errors: booleanQuery.describe("DAGs whose file does not load now (they keep their last good version)"),
    last_dag_run_state: z.enum(RUN_STATES).optional().describe("the state of each DAG's latest run"),
    bundle_name: z.string().max(250).optional(),
    bundle_version: z.string().max(250).optional().describe("no bundle is versioned here: any value matches none"),
    has_asset_schedule: booleanQuery.describe("no DAG is scheduled by assets here: true matches none"),
    asset_dependency: z.string().max(250).optional().describe("no assets here: any value matches none"),
    ...rangeShape("dag_run_start_date", queryDate),
    ...rangeShape("dag_run_end_date", queryDate),
    dag_run_state: oneOrMany(z.enum(RUN_STATES)).optional().describe("DAGs with a run in one of these states (with the dag_run date ranges: the same run)"),
    is_favorite: booleanQuery.describe("the caller's favourite DAGs (true) or the others (false); a call without a token has none"),
    timetable_type: oneOrMany(z.string().max(250)).optional().describe("CronTriggerTimetable for a cron schedule, DeltaTriggerTimetable for an interval, NullTimetable for none"),
    order_by: oneOrMany(dagOrderValue).default(["dag_id"]).describe("several keys; '-' for descending; state and start_date are the latest run's"),
  })
  .strict();
export type ListDagsQuery = z.output<typeof listDagsQuery>;

/** PATCH /api/v2/dags: the DAGs to pause or unpause, chosen as GET /dags chooses them. */
export const patchDagsQuery = pageQuery
  .extend({ ...dagSelection, limit: limitParam(50), update_mask: oneOrMany(z.literal("is_paused", { error: "only is_paused can be changed" })).optional() })
  .strict();

