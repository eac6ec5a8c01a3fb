// Engine records -> Airflow public API v2 JSON (snake_case, ISO dates, durations in seconds), with
// every field Airflow 3's response models require (responses.ts says which are fixed here and why).
import { createHash } from "node:crypto";
import {
  DEFAULT_BUNDLE,
  type DagRunRecord,
  type DagSummary,
  type DagVersionRecord,
  type ImportErrorRecord,
  type TaskInstanceRecord,
  type TaskLogRecord,
  type VariableChange,
  type VariableRecord,
} from "../runner/index.ts";
import type {
  DagDetailsResponse,
  DagResponse,
  DagRunResponse,
  DagVersionResponse,
  ImportErrorResponse,
  TaskInstanceResponse,
  VariableChangeResponse,
  VariableResponse,
} from "./schemas.ts";
import { TRIGGERED_BY_TYPES } from "./responses.ts";

/** What a DAG's serialisation needs besides the DAG: its file token. */
export interface DagSerializeContext {
  fileToken(fileloc: string): string;
}


function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

function secondsBetween(start: Date | null, end: Date | null): number | null {
  return start && end ? (end.getTime() - start.getTime()) / 1000 : null;
}

/** A version as Airflow's DagVersionResponse: each DAG folder is an unversioned bundle. */
export function serializeDagVersion(version: DagVersionRecord): DagVersionResponse {
  return {
    id: version.id,
    version_number: version.versionNumber,
    dag_id: version.dagId,
    bundle_name: version.bundleName,
    bundle_version: null,
    created_at: version.createdAt.toISOString(),
    dag_display_name: version.dagId,
    bundle_url: null,
  };
}

/** `favourite`: whether the caller marked it (favorite_dag). */
export function serializeDag(dag: DagSummary, context: DagSerializeContext, favourite: boolean): DagResponse {
  return {
    dag_id: dag.dagId,
    dag_display_name: dag.dagId,
    is_paused: dag.isPaused,
    is_stale: dag.isStale,
    last_parsed_time: iso(dag.lastParsedTime),
    last_parse_duration: dag.lastParseDurationS,
    last_expired: null,
    bundle_name: dag.latestVersion?.bundleName ?? DEFAULT_BUNDLE,
    bundle_version: null,
    relative_fileloc: dag.fileloc.replace(/^dags\//, ""),
    fileloc: dag.fileloc,
    description: dag.description || null,
    timetable_summary: dag.schedule,
    timetable_description: dag.schedule === null ? "Never, external triggers only" : `cron: ${dag.schedule}`,
    timetable_partitioned: false,
    timetable_periodic: dag.schedule !== null,
    tags: [],
    // the engine has no per-DAG task cap: at most every task of a run is in flight at once
    max_active_tasks: dag.taskIds.length,
    max_active_runs: dag.maxActiveRuns,
    max_consecutive_failed_dag_runs: 0,
    has_task_concurrency_limits: false,
    has_import_errors: dag.hasImportErrors,
    next_dagrun_logical_date: null,
    next_dagrun_data_interval_start: null,
    next_dagrun_data_interval_end: null,
    next_dagrun_run_after: null,
    allowed_run_types: null,
    owners: [],
    is_backfillable: dag.schedule !== null, // POST /api/v2/backfills takes any scheduled DAG
    file_token: context.fileToken(dag.fileloc),
    exclusive_resources: [...dag.exclusive],
    task_ids: [...dag.taskIds],
    params_schema: dag.paramsJsonSchema,
    is_favorite: favourite,
  };
}

/** Airflow's serialised params ({name: {value, schema, description}}) from the conf's JSON Schema. */
function airflowParams(schema: unknown): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, Record<string, unknown>> } | null)?.properties ?? {};
  return Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [
      name,
      { value: property.default ?? null, schema: property, description: typeof property.description === "string" ? property.description : null },
    ]),
  );
}

export function serializeDagDetails(dag: DagSummary, context: DagSerializeContext & { activeRuns: number }, favourite: boolean): DagDetailsResponse {
  const base = serializeDag(dag, context, favourite);
  return {
    ...base,
    catchup: false,
    dag_run_timeout: null,
    asset_expression: null,
    doc_md: null,
    start_date: null,
    end_date: null,
    is_paused_upon_creation: null,
    params: airflowParams(dag.paramsJsonSchema),
    render_template_as_native_obj: false,
    template_search_path: null,
    timezone: "UTC",
    last_parsed: base.last_parsed_time,
    default_args: null,
    active_runs_count: context.activeRuns,
    concurrency: base.max_active_tasks,
    latest_dag_version: dag.latestVersion === null ? null : serializeDagVersion(dag.latestVersion),
  };
}

type TriggeredBy = (typeof TRIGGERED_BY_TYPES)[number];

/** The engine records who triggered a run in its own words; Airflow has a fixed list. */
function triggeredByType(recorded: string): TriggeredBy | null {
  if (recorded === "scheduler") return "timetable";
  if (recorded === "web") return "ui";
  if (recorded.startsWith("dag:")) return "operator";
  return (TRIGGERED_BY_TYPES as readonly string[]).includes(recorded) ? (recorded as TriggeredBy) : null;
}

/** A run's triggering user is kept in the engine's triggered_by as "<type>:user:<name>". */
export function triggeredByWithUser(type: "cli" | "rest_api", user: string | undefined): string {
  return user === undefined ? type : `${type}:user:${user}`;
}

function splitTriggeredBy(recorded: string): { type: string; user: string | null } {
  const match = /^(cli|rest_api|backfill):user:(.+)$/.exec(recorded);
  return match?.[1] && match[2] ? { type: match[1], user: match[2] } : { type: recorded, user: null };
}

export function serializeRun(run: DagRunRecord): DagRunResponse {
  const by = splitTriggeredBy(run.triggeredBy);
  return {
    dag_run_id: run.runId,
    dag_id: run.dagId,
    logical_date: iso(run.logicalDate),
    queued_at: iso(run.queuedAt),
    start_date: iso(run.startDate),
    end_date: iso(run.endDate),
    duration: secondsBetween(run.startDate, run.endDate),
    data_interval_start: null,
    data_interval_end: null,
    run_after: run.queuedAt.toISOString(),
    last_scheduling_decision: null,
    run_type: run.runType === "triggered" ? "operator_triggered" : run.runType,
    state: run.state,
    triggered_by: triggeredByType(by.type),
    triggering_user_name: by.user,
    conf: run.conf,
    note: run.note,
    dag_versions: run.dagVersion === null ? [] : [serializeDagVersion(run.dagVersion)],
    bundle_version: null,
    dag_display_name: run.dagId,
    partition_key: null,
    partition_date: null,
    task_ids: [...run.manifest],
    triggered_by_detail: run.triggeredBy,
    parent_dag_id: run.parentDagId,
    parent_dag_run_id: run.parentRunId,
    parent_task_id: run.parentTaskId,
    waiting_for: run.waitingFor,
  };
}

/** A stable UUID (version 5 layout, SHA-1 of the names) for a task instance, which Airflow's
 * TaskInstanceResponse.id requires; the engine's own id is a number private to its database. */
export function taskInstanceUuid(dagId: string, runId: string, taskId: string): string {
  const bytes = createHash("sha1").update(`task-instance\u0000${dagId}\u0000${runId}\u0000${taskId}`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function serializeTaskInstance(ti: TaskInstanceRecord, run: DagRunRecord): TaskInstanceResponse {
  return {
    id: taskInstanceUuid(ti.dagId, ti.runId, ti.taskId),
    task_id: ti.taskId,
    dag_id: ti.dagId,
    dag_run_id: ti.runId,
    map_index: -1,
    logical_date: iso(run.logicalDate),
    run_after: run.queuedAt.toISOString(),
    start_date: iso(ti.startDate),
    end_date: iso(ti.endDate),
    duration: ti.durationMs === null ? secondsBetween(ti.startDate, ti.endDate) : ti.durationMs / 1000,
    state: ti.state,
    try_number: ti.tryNumber,
    // Airflow's max_tries counts retries; the engine counts every try (retries + 1).
    max_tries: Math.max(0, ti.maxTries - 1),
    task_display_name: ti.taskId,
    dag_display_name: ti.dagId,
    hostname: ti.worker,
    unixname: null,
    pool: "default_pool",
    pool_slots: 1,
    queue: "default",
    priority_weight: null,
    operator: null,
    operator_name: null,
    queued_when: null,
    scheduled_when: null,
    pid: null,
    executor: null,
    executor_config: "{}",
    note: ti.note,
    rendered_map_index: null,
    rendered_fields: {},
    trigger: null,
    triggerer_job: null,
    dag_version: run.dagVersion === null ? null : serializeDagVersion(run.dagVersion),
    error: ti.error,
    child_dag_id: ti.childDagId,
    child_dag_run_id: ti.childRunId,
  };
}

export function serializeImportError(error: ImportErrorRecord): ImportErrorResponse {
  return {
    import_error_id: error.id,
    timestamp: error.timestamp.toISOString(),
    filename: error.filename,
    bundle_name: error.bundleName,
    stack_trace: error.stackTrace,
  };
}

export function logLines(log: TaskLogRecord, from: number): { timestamp: string; event: string; level: string }[] {
  return log.lines.slice(from).map((line) => ({ timestamp: line.at.toISOString(), event: line.message, level: line.level }));
}

/** Plain-text log: one line per entry, "<ISO time> <LEVEL> <message>". */
export function logAsText(log: TaskLogRecord, from: number): string {
  return log.lines
    .slice(from)
    .map((line) => `${line.at.toISOString()} ${line.level.toUpperCase()} ${line.message}\n`)
    .join("");
}

export function serializeVariable(variable: VariableRecord): VariableResponse {
  return {
    key: variable.key,
    value: variable.value,
    description: variable.description,
    is_encrypted: false,
    team_name: null,
    updated_at: variable.updatedAt.toISOString(),
  };
}

export function serializeVariableChange(change: VariableChange): VariableChangeResponse {
  return {
    key: change.key,
    old_value: change.oldValue,
    new_value: change.newValue,
    changed_at: change.changedAt.toISOString(),
    changed_by: change.changedBy,
    dag_id: change.dagId,
    dag_run_id: change.runId,
  };
}
