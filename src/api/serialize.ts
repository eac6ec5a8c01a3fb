// Engine records -> Airflow public API v2 JSON (snake_case, ISO dates, durations in seconds).
import type {
  DagRunRecord,
  DagSummary,
  TaskInstanceRecord,
  TaskLogRecord,
  VariableChange,
  VariableRecord,
} from "../runner/types.ts";
import type {
  DagResponse,
  DagRunResponse,
  LogResponse,
  TaskInstanceResponse,
  VariableChangeResponse,
  VariableResponse,
} from "./schemas.ts";

function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

function secondsBetween(start: Date | null, end: Date | null): number | null {
  return start && end ? (end.getTime() - start.getTime()) / 1000 : null;
}

export function serializeDag(dag: DagSummary): DagResponse {
  return {
    dag_id: dag.dagId,
    dag_display_name: dag.dagId,
    description: dag.description || null,
    is_paused: dag.isPaused,
    is_stale: false,
    fileloc: dag.fileloc,
    timetable_summary: dag.schedule,
    max_active_runs: dag.maxActiveRuns,
    exclusive_resources: [...dag.exclusive],
    tags: [],
    owners: [],
    task_ids: [...dag.taskIds],
    params_schema: dag.paramsJsonSchema,
  };
}

export function serializeRun(run: DagRunRecord): DagRunResponse {
  return {
    dag_run_id: run.runId,
    dag_id: run.dagId,
    logical_date: iso(run.logicalDate),
    queued_at: iso(run.queuedAt),
    start_date: iso(run.startDate),
    end_date: iso(run.endDate),
    duration: secondsBetween(run.startDate, run.endDate),
    run_after: run.queuedAt.toISOString(),
    run_type: run.runType === "triggered" ? "operator_triggered" : run.runType,
    state: run.state,
    triggered_by: run.triggeredBy || null,
    conf: run.conf,
    note: run.note,
    dag_display_name: run.dagId,
    task_ids: [...run.manifest],
    parent_dag_id: run.parentDagId,
    parent_dag_run_id: run.parentRunId,
    waiting_for: run.waitingFor,
    parent_task_id: run.parentTaskId,
  };
}

export function serializeTaskInstance(ti: TaskInstanceRecord, run: DagRunRecord | null): TaskInstanceResponse {
  return {
    id: `${ti.dagId}/${ti.runId}/${ti.taskId}`,
    task_id: ti.taskId,
    task_display_name: ti.taskId,
    dag_id: ti.dagId,
    dag_display_name: ti.dagId,
    dag_run_id: ti.runId,
    map_index: -1,
    logical_date: run ? iso(run.logicalDate) : null,
    start_date: iso(ti.startDate),
    end_date: iso(ti.endDate),
    duration: ti.durationMs === null ? secondsBetween(ti.startDate, ti.endDate) : ti.durationMs / 1000,
    state: ti.state,
    try_number: ti.tryNumber,
    // Airflow's max_tries counts retries; the engine counts every try (retries + 1).
    max_tries: Math.max(0, ti.maxTries - 1),
    hostname: ti.worker,
    note: null,
    error: ti.error,
    child_dag_id: ti.childDagId,
    child_dag_run_id: ti.childRunId,
  };
}

export function serializeLog(log: TaskLogRecord): LogResponse {
  return {
    content: log.lines.map((line) => ({ timestamp: line.at.toISOString(), event: line.message, level: line.level })),
    continuation_token: null,
  };
}

/** Plain-text log: one line per entry, "<ISO time> <LEVEL> <message>". */
export function logAsText(log: TaskLogRecord): string {
  return log.lines.map((line) => `${line.at.toISOString()} ${line.level.toUpperCase()} ${line.message}\n`).join("");
}

export function serializeVariable(variable: VariableRecord): VariableResponse {
  return {
    key: variable.key,
    value: variable.value,
    description: variable.description,
    is_encrypted: false,
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
