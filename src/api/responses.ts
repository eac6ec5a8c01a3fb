// Zod schemas of every response body, field for field Airflow 3's (vendor/airflow/
// v2-rest-api-generated.yaml, apache-airflow-core 3.3.2): every field Airflow requires is here with
// its type, `null` only where Airflow allows it. Runner extensions are extra fields, which Airflow's
// response models ignore. The schemas type the serialisers and become our OpenAPI components.
import { z } from "zod";
import { RUN_STATES, TASK_STATES } from "../runner/index.ts";

export const isoDate = z.iso
  .datetime({ offset: true, error: "must be an ISO 8601 date-time with a zone, e.g. 2026-01-01T00:00:00Z" })
  .describe("ISO 8601 date-time");
const nullableIsoDate = isoDate.nullable();

/** Airflow's DagRunTriggeredByType. */
export const TRIGGERED_BY_TYPES = ["cli", "operator", "rest_api", "ui", "test", "timetable", "asset", "backfill"] as const;
export const RUN_TYPES = ["backfill", "scheduled", "manual", "operator_triggered", "asset_triggered", "asset_materialization"] as const;

const dagTag = z.object({ name: z.string(), dag_id: z.string(), dag_display_name: z.string() });

/** Airflow's DagVersionResponse: one version of a DAG, made per change of its structure or code. */
export const dagVersionResponse = z.object({
  id: z.uuid(),
  version_number: z.number().int(),
  dag_id: z.string(),
  bundle_name: z.string().nullable().describe("the DAG folder the version was parsed from: dags-folder (the repository's dags/) or stand-dags (<state_dir>/dags)"),
  bundle_version: z.string().nullable().describe("always null: the DAGs folder is not a versioned bundle"),
  created_at: isoDate,
  dag_display_name: z.string(),
  bundle_url: z.string().nullable(),
});
export const dagVersionCollection = z.object({ dag_versions: z.array(dagVersionResponse), total_entries: z.number().int() });

const dagFields = {
  dag_id: z.string(),
  dag_display_name: z.string(),
  is_paused: z.boolean(),
  is_stale: z.boolean().describe("its file is gone or no longer declares it: runs stay readable, none can be triggered"),
  last_parsed_time: nullableIsoDate.describe("when the DAG's file was last parsed (for a DAG given in code: when a runner last recorded it)"),
  last_parse_duration: z.number().nullable().describe("seconds the last parse of its file took; null for a DAG given in code"),
  last_expired: nullableIsoDate,
  bundle_name: z.string().nullable(),
  bundle_version: z.string().nullable(),
  relative_fileloc: z.string().nullable(),
  fileloc: z.string(),
  description: z.string().nullable(),
  timetable_summary: z.string().nullable().describe("the cron schedule; null for manual DAGs"),
  timetable_description: z.string().nullable(),
  timetable_partitioned: z.boolean(),
  timetable_periodic: z.boolean(),
  tags: z.array(dagTag),
  max_active_tasks: z.number().int(),
  max_active_runs: z.number().int().nullable(),
  max_consecutive_failed_dag_runs: z.number().int(),
  has_task_concurrency_limits: z.boolean(),
  has_import_errors: z.boolean().describe("its file does not load now; the DAG keeps its last good version meanwhile"),
  next_dagrun_logical_date: nullableIsoDate,
  next_dagrun_data_interval_start: nullableIsoDate,
  next_dagrun_data_interval_end: nullableIsoDate,
  next_dagrun_run_after: nullableIsoDate,
  allowed_run_types: z.array(z.enum(RUN_TYPES)).nullable(),
  owners: z.array(z.string()),
  is_backfillable: z.boolean(),
  file_token: z.string().describe("signed token of the DAG's file; GET /api/v2/dagSources/{file_token} also answers it"),
  // runner extensions
  exclusive_resources: z.array(z.string()).describe("named resources each run of this DAG holds exclusively (runner extension)"),
  task_ids: z.array(z.string()).describe("extension: the DAG's task ids in declaration order"),
  params_schema: z.unknown().describe("extension: JSON Schema of the conf the DAG accepts"),
  is_favorite: z.boolean().describe("the caller marked it (favorite_dag); Airflow says it on a DAG's details, here on every DAG too"),
};

export const dagResponse = z.object(dagFields);
export const dagCollection = z.object({ dags: z.array(dagResponse), total_entries: z.number().int() });

export const dagDetailsResponse = z.object({
  ...dagFields,
  catchup: z.boolean(),
  dag_run_timeout: z.string().nullable(),
  asset_expression: z.record(z.string(), z.unknown()).nullable(),
  doc_md: z.string().nullable(),
  start_date: nullableIsoDate,
  end_date: nullableIsoDate,
  is_paused_upon_creation: z.boolean().nullable(),
  params: z.record(z.string(), z.unknown()).nullable().describe("Airflow's serialised params: {name: {value, schema, description}}"),
  render_template_as_native_obj: z.boolean(),
  template_search_path: z.array(z.string()).nullable(),
  timezone: z.string().nullable(),
  last_parsed: nullableIsoDate,
  default_args: z.record(z.string(), z.unknown()).nullable(),
  active_runs_count: z.number().int(),
  concurrency: z.number().int(),
  latest_dag_version: dagVersionResponse.nullable(),
});

export const dagRunResponse = z.object({
  dag_run_id: z.string(),
  dag_id: z.string(),
  logical_date: nullableIsoDate,
  queued_at: nullableIsoDate,
  start_date: nullableIsoDate,
  end_date: nullableIsoDate,
  duration: z.number().nullable().describe("seconds"),
  data_interval_start: nullableIsoDate,
  data_interval_end: nullableIsoDate,
  run_after: isoDate,
  last_scheduling_decision: nullableIsoDate,
  run_type: z.enum(RUN_TYPES),
  state: z.enum(RUN_STATES),
  triggered_by: z.enum(TRIGGERED_BY_TYPES).nullable(),
  triggering_user_name: z.string().nullable().describe("the user of the token that triggered it (login users); null otherwise"),
  conf: z.record(z.string(), z.unknown()).nullable(),
  note: z.string().nullable(),
  dag_versions: z.array(dagVersionResponse).describe("the version the run was made from (and runs to its end); empty for a run from before versions"),
  bundle_version: z.string().nullable(),
  dag_display_name: z.string(),
  partition_key: z.string().nullable(),
  partition_date: nullableIsoDate,
  // runner extensions
  task_ids: z.array(z.string()).describe("extension: the manifest declared at creation"),
  triggered_by_detail: z.string().describe("extension: who triggered it, as the runner recorded it (e.g. dag:<dag>/<run>/<task>)"),
  parent_dag_id: z.string().nullable().describe("extension: set when a waiting trigger created this run"),
  parent_dag_run_id: z.string().nullable(),
  parent_task_id: z.string().nullable(),
  waiting_for: z.string().nullable().describe("why a queued run has not started: the exclusive resource and the run holding it (runner extension)"),
});

export const dagRunCollection = z.object({ dag_runs: z.array(dagRunResponse), total_entries: z.number().int() });

export const taskInstanceResponse = z.object({
  id: z.uuid().describe("a stable UUID derived from dag_id, dag_run_id and task_id"),
  task_id: z.string(),
  dag_id: z.string(),
  dag_run_id: z.string(),
  map_index: z.int().min(-1).max(-1).describe("always -1: tasks are not mapped here"),
  logical_date: nullableIsoDate,
  run_after: isoDate,
  start_date: nullableIsoDate,
  end_date: nullableIsoDate,
  duration: z.number().nullable().describe("seconds"),
  state: z.enum(TASK_STATES).nullable(),
  try_number: z.number().int(),
  max_tries: z.number().int().describe("retries allowed (Airflow's meaning): up to max_tries + 1 tries"),
  task_display_name: z.string(),
  dag_display_name: z.string(),
  hostname: z.string().nullable().describe("the worker that ran the latest try"),
  unixname: z.string().nullable(),
  pool: z.string(),
  pool_slots: z.number().int(),
  queue: z.string().nullable(),
  priority_weight: z.number().int().nullable(),
  operator: z.string().nullable(),
  operator_name: z.string().nullable(),
  queued_when: nullableIsoDate,
  scheduled_when: nullableIsoDate,
  pid: z.number().int().nullable(),
  executor: z.string().nullable(),
  executor_config: z.string(),
  note: z.string().nullable(),
  rendered_map_index: z.string().nullable(),
  rendered_fields: z.record(z.string(), z.unknown()),
  trigger: z.null(),
  triggerer_job: z.null(),
  dag_version: dagVersionResponse.nullable().describe("its run's version"),
  // runner extensions
  error: z.string().nullable().describe("extension: the latest try's error"),
  child_dag_id: z.string().nullable().describe("extension: for a waiting trigger, the child run it started"),
  child_dag_run_id: z.string().nullable(),
});

export const taskInstanceCollection = z.object({
  task_instances: z.array(taskInstanceResponse),
  total_entries: z.number().int(),
});

export const logResponse = z.object({
  content: z.array(z.object({ timestamp: isoDate, event: z.string(), level: z.string() })),
  continuation_token: z
    .string()
    .nullable()
    .describe("null when the try has ended and every line was sent; else pass it back as ?token= to read on"),
});

export const variableResponse = z.object({
  key: z.string(),
  value: z.string(),
  description: z.string().nullable(),
  is_encrypted: z.literal(false),
  team_name: z.null(),
  updated_at: isoDate.describe("extension"),
});

export const variableCollection = z.object({ variables: z.array(variableResponse), total_entries: z.number().int() });

const bulkActionResponse = z.object({
  success: z.array(z.string()),
  errors: z.array(z.object({ error: z.string(), status_code: z.number().int() })),
});
export const bulkResponse = z.object({
  create: bulkActionResponse.nullable().optional(),
  update: bulkActionResponse.nullable().optional(),
  delete: bulkActionResponse.nullable().optional(),
});

export const variableChangeResponse = z.object({
  key: z.string(),
  old_value: z.string().nullable(),
  new_value: z.string().nullable(),
  changed_at: isoDate,
  changed_by: z.string(),
  dag_id: z.string().nullable(),
  dag_run_id: z.string().nullable(),
});

export const variableHistoryResponse = z.object({
  changes: z.array(variableChangeResponse).describe("oldest first"),
  total_entries: z.number().int(),
});

const componentStatus = z.enum(["healthy", "unhealthy"]);
export const healthResponse = z.object({
  metadatabase: z.object({
    status: componentStatus,
    detail: z.string().optional().describe("this runner's addition: which Postgres it cannot reach and the error (absent when healthy)"),
  }),
  scheduler: z.object({ status: componentStatus, latest_scheduler_heartbeat: nullableIsoDate }),
  triggerer: z
    .object({ status: componentStatus, latest_triggerer_heartbeat: nullableIsoDate })
    .describe("waiting triggers resume inside the engine: the scheduler's heartbeat is theirs"),
  dag_processor: z.null().describe("the DAG processor runs inside a runner (one of a pool parses) and has no heartbeat of its own"),
});

export const versionResponse = z.object({
  version: z.string().describe("the Airflow REST API version this runner speaks, plus the runner's own build"),
  git_version: z.string().nullable(),
});

export const importErrorResponse = z.object({
  import_error_id: z.number().int(),
  timestamp: isoDate,
  filename: z.string(),
  bundle_name: z.string().nullable(),
  stack_trace: z.string(),
});
export const importErrorCollection = z.object({ import_errors: z.array(importErrorResponse), total_entries: z.number().int() });

export const dagStatsCollection = z.object({
  dags: z.array(
    z.object({
      dag_id: z.string(),
      dag_display_name: z.string(),
      stats: z.array(z.object({ state: z.enum(RUN_STATES), count: z.number().int() })),
    }),
  ),
  total_entries: z.number().int(),
});

export const dagSourceResponse = z.object({
  content: z.string().nullable(),
  dag_id: z.string(),
  version_number: z.number().int().nullable().describe("the version whose source this is; null when the DAG has no version"),
  dag_display_name: z.string(),
});

export const loginResponse = z.object({ access_token: z.string().describe("a signed JWT (HS256) with an expiry") });

/** Problem JSON: Airflow's {detail} (HTTPExceptionResponse) plus RFC 9457 fields. On 422 `detail`
 * is FastAPI's list of {loc, msg, type} (Airflow's HTTPValidationError). */
export const problemResponse = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.union([z.string(), z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }))]),
  field: z.string().optional().describe("the request field the problem is about"),
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
  request_id: z.string().optional(),
});

export type DagResponse = z.infer<typeof dagResponse>;
export type DagDetailsResponse = z.infer<typeof dagDetailsResponse>;
export type DagRunResponse = z.infer<typeof dagRunResponse>;
export type TaskInstanceResponse = z.infer<typeof taskInstanceResponse>;
export type VariableResponse = z.infer<typeof variableResponse>;
export type VariableChangeResponse = z.infer<typeof variableChangeResponse>;
export type LogResponse = z.infer<typeof logResponse>;
export type BulkResponse = z.infer<typeof bulkResponse>;
export type ImportErrorResponse = z.infer<typeof importErrorResponse>;
export type DagVersionResponse = z.infer<typeof dagVersionResponse>;

/** Airflow's TimeDelta object. */
export const timeDelta = z.object({ __type: z.string(), days: z.number().int(), seconds: z.number().int(), microseconds: z.number().int() });

export const taskResponse = z.object({
  task_id: z.string().nullable(),
  task_display_name: z.string().nullable(),
  owner: z.string().nullable(),
  start_date: isoDate.nullable(),
  end_date: isoDate.nullable(),
  trigger_rule: z.string().nullable().describe("all_success: a task runs when every upstream succeeded (skipped upstream: skipped)"),
  depends_on_past: z.boolean(),
  wait_for_downstream: z.boolean(),
  retries: z.number().nullable(),
  queue: z.string().nullable(),
  pool: z.string().nullable(),
  pool_slots: z.number().nullable(),
  execution_timeout: timeDelta.nullable(),
  retry_delay: timeDelta.nullable(),
  retry_exponential_backoff: z.number().describe("2: each retry waits twice the last, up to the task's cap"),
  priority_weight: z.number().nullable(),
  weight_rule: z.string().nullable(),
  ui_color: z.string().nullable(),
  ui_fgcolor: z.string().nullable(),
  template_fields: z.array(z.string()).nullable(),
  downstream_task_ids: z.array(z.string()).nullable(),
  doc_md: z.string().nullable(),
  operator_name: z.string().nullable().describe("callable (a function) or waiting_trigger (starts a DAG's run and waits for it)"),
  params: z.record(z.string(), z.unknown()).nullable(),
  class_ref: z.record(z.string(), z.unknown()).nullable(),
  is_mapped: z.boolean().nullable(),
  extra_links: z.array(z.string()),
  trigger_dag_id: z.string().nullable().describe("the DAG a waiting trigger starts"),
});
export const taskCollection = z.object({ tasks: z.array(taskResponse), total_entries: z.number().int() });

export const dagTagCollection = z.object({ tags: z.array(z.string()), total_entries: z.number().int() });
export const emptyCollection = (key: string) => z.object({ [key]: z.array(z.never()), total_entries: z.number().int() });

/** Airflow's TaskInstanceHistoryResponse: one try of a task instance. */
export const taskTryResponse = taskInstanceResponse
  .omit({ id: true, logical_date: true, run_after: true, note: true, rendered_map_index: true, rendered_fields: true, trigger: true, triggerer_job: true, child_dag_id: true, child_dag_run_id: true })
  .extend({ state: z.enum(["running", "deferred", "success", "failed"]).describe("the try's own end; a try whose worker died is failed (its error says it was lost)") });
export const taskTryCollection = z.object({ task_instances: z.array(taskTryResponse), total_entries: z.number().int() });
export const taskDependencyCollection = z.object({ dependencies: z.array(z.object({ name: z.string(), reason: z.string() })) });
export const extraLinkCollection = z.object({ extra_links: z.record(z.string(), z.string().nullable()), total_entries: z.number().int() });

export const eventLogResponse = z.object({
  event_log_id: z.number().int(),
  when: isoDate,
  dag_id: z.string().nullable(),
  task_id: z.string().nullable(),
  run_id: z.string().nullable(),
  map_index: z.number().int().nullable(),
  try_number: z.number().int().nullable(),
  event: z.string().describe("the API route's operationId (trigger_dag_run, patch_dag_run, post_clear_task_instances, patch_dag, post_variable, …), create_token for a login, login_failed, or web_* for a page action"),
  logical_date: nullableIsoDate,
  owner: z.string().nullable().describe("the logged-in user, 'api_token (<client>)' for the shared token, 'web' for a page action"),
  extra: z.string().nullable().describe("the request's body and query as JSON, secrets masked"),
  dag_display_name: z.string().nullable(),
  task_display_name: z.string().nullable(),
});
export const eventLogCollection = z.object({ event_logs: z.array(eventLogResponse), total_entries: z.number().int() });

/** Airflow's XComResponse (a list item: no value). */
export const xcomResponse = z.object({
  key: z.string(),
  timestamp: isoDate,
  logical_date: nullableIsoDate,
  map_index: z.number().int(),
  task_id: z.string(),
  dag_id: z.string(),
  run_id: z.string(),
  dag_display_name: z.string(),
  task_display_name: z.string(),
  run_after: isoDate,
});
export const xcomCollection = z.object({ xcom_entries: z.array(xcomResponse), total_entries: z.number().int() });
/** XComResponseNative (the value as JSON) or, with stringify, XComResponseString (its JSON text). */
export const xcomResponseNative = xcomResponse.extend({ value: z.unknown() });

/** Airflow's BackfillResponse; run_backwards and run_on_latest_version are this runner's additions. */
export const backfillResponse = z.object({
  id: z.number().int().min(0),
  dag_id: z.string(),
  from_date: isoDate,
  to_date: isoDate,
  dag_run_conf: z.record(z.string(), z.unknown()).nullable().describe("null when none was given: new runs take the DAG's defaults, reprocessed runs keep their own"),
  is_paused: z.boolean().describe("no new runs are made while paused (the active ones finish); a cancelled backfill stays paused"),
  reprocess_behavior: z.enum(["failed", "completed", "none"]),
  max_active_runs: z.number().int(),
  created_at: isoDate,
  completed_at: nullableIsoDate.describe("when every date had run and its runs ended, or when it was cancelled"),
  updated_at: isoDate,
  dag_display_name: z.string(),
  run_backwards: z.boolean(),
  run_on_latest_version: z.boolean(),
});
export const backfillCollection = z.object({ backfills: z.array(backfillResponse), total_entries: z.number().int() });
/** Airflow's DryRunBackfillResponse: a logical date the backfill would run (no partitions here). */
export const dryRunBackfillCollection = z.object({
  backfills: z.array(z.object({ logical_date: nullableIsoDate, partition_key: z.string().nullable(), partition_date: nullableIsoDate })),
  total_entries: z.number().int(),
});
