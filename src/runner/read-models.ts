// Reads for the service (API, web view): runs, task instances and logs, mapped from rows to the
// records in types.ts. Nothing here changes state.
import type pg from "pg";
import { query, queryOne, statement, type Queryable } from "./db.ts";
import { DagRunNotFoundError, TaskInstanceNotFoundError, TryNotFoundError } from "./errors.ts";
import type {
  DagRunRecord,
  DagVersionRecord,
  ListRunsQuery,
  Page,
  RunConf,
  RunState,
  RunType,
  TaskInstanceRecord,
  TaskLogRecord,
  TaskState,
} from "./types.ts";

export interface RunRow {
  id: number;
  dag_id: string;
  run_id: string;
  state: RunState;
  run_type: RunType;
  conf: RunConf;
  logical_date: Date | null;
  queued_at: Date;
  start_date: Date | null;
  end_date: Date | null;
  note: string | null;
  manifest: string[];
  parent_dag_id: string | null;
  parent_run_id: string | null;
  waiting_for: string | null;
  parent_task_id: string | null;
  triggered_by: string;
  dag_version: VersionJson | null;
}

/** A dag_versions row as json_build_object gives it (timestamps as text). */
export interface VersionJson {
  id: string;
  dag_id: string;
  version_number: number;
  created_at: string;
  code_hash: string | null;
  fileloc: string;
  bundle_name: string;
}

/** The select list of a version as VersionJson, for a row `v` of runner.dag_versions. */
export const VERSION_JSON = `json_build_object('id', v.id, 'dag_id', v.dag_id, 'version_number', v.version_number,
  'created_at', v.created_at, 'code_hash', v.code_hash, 'fileloc', v.fileloc, 'bundle_name', v.bundle_name)`;

export function toVersionRecord(v: VersionJson): DagVersionRecord {
  return { id: v.id, dagId: v.dag_id, versionNumber: v.version_number, createdAt: new Date(v.created_at), codeHash: v.code_hash, fileloc: v.fileloc, bundleName: v.bundle_name };
}

export interface TaskInstanceRow {
  id: number;
  task_id: string;
  state: TaskState;
  try_number: number;
  max_tries: number;
  start_date: Date | null;
  end_date: Date | null;
  worker: string | null;
  error: string | null;
  child_dag_id: string | null;
  child_run_id: string | null;
  note: string | null;
}

/** The select list of a run as RunRow, for the runner.dag_runs row named `alias`. */
export function runColumns(alias: string): string {
  const c = (name: string) => `${alias}.${name}`;
  return `${["id", "dag_id", "run_id", "state", "run_type", "conf", "logical_date", "queued_at", "start_date", "end_date", "note", "manifest",
    "parent_dag_id", "parent_run_id", "parent_task_id", "triggered_by", "waiting_for"].map(c).join(", ")},
  (select ${VERSION_JSON} from runner.dag_versions v where v.id = ${c("dag_version_id")}) as dag_version`;
}
const RUN_COLUMNS = runColumns("dag_runs");

const GET_RUN = statement("get_run", `select ${RUN_COLUMNS} from runner.dag_runs where dag_id = $1 and run_id = $2`);
const LIST_RUNS_DESC = statement(
  "list_runs_desc",
  `select ${RUN_COLUMNS}, count(*) over () as total from runner.dag_runs
    where dag_id = $1 and ($2::text[] is null or state = any($2::text[])) order by id desc limit $3 offset $4`,
);
const LIST_RUNS_ASC = statement(
  "list_runs_asc",
  `select ${RUN_COLUMNS}, count(*) over () as total from runner.dag_runs
    where dag_id = $1 and ($2::text[] is null or state = any($2::text[])) order by id asc limit $3 offset $4`,
);
const COUNT_RUNS = statement(
  "count_runs",
  "select count(*) as total from runner.dag_runs where dag_id = $1 and ($2::text[] is null or state = any($2::text[]))",
);
/** The select list of a task instance as TaskInstanceRow, for a row `ti` of runner.task_instances. */
export const TASK_INSTANCE_COLUMNS = `ti.id, ti.task_id, ti.state, ti.try_number, ti.max_tries, ti.start_date, ti.end_date, ti.worker, ti.error,
          ti.child_dag_id, ti.child_run_id, ti.note`;
const LIST_TASK_INSTANCES = statement(
  "list_task_instances",
  `select ${TASK_INSTANCE_COLUMNS}
     from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk
    where r.dag_id = $1 and r.run_id = $2
    order by array_position(r.manifest, ti.task_id), ti.task_id`,
);
const FIND_TASK_INSTANCE = statement(
  "find_task_instance",
  `select ti.id, ti.try_number from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk
    where r.dag_id = $1 and r.run_id = $2 and ti.task_id = $3`,
);
const LOG_LINES = statement(
  "log_lines",
  "select at, level, message from runner.task_log_lines where ti_id = $1 and try_number = $2 order by at, id",
);

export function toRunRecord(row: RunRow): DagRunRecord {
  return {
    dagId: row.dag_id,
    runId: row.run_id,
    state: row.state,
    runType: row.run_type,
    conf: row.conf,
    logicalDate: row.logical_date,
    queuedAt: row.queued_at,
    startDate: row.start_date,
    endDate: row.end_date,
    note: row.note,
    manifest: row.manifest,
    parentDagId: row.parent_dag_id,
    parentRunId: row.parent_run_id,
    waitingFor: row.waiting_for,
    parentTaskId: row.parent_task_id,
    triggeredBy: row.triggered_by,
    dagVersion: row.dag_version && toVersionRecord(row.dag_version),
  };
}

export function toTaskInstanceRecord(dagId: string, runId: string, row: TaskInstanceRow): TaskInstanceRecord {
  const durationMs = row.start_date && row.end_date ? row.end_date.getTime() - row.start_date.getTime() : null;
  return {
    dagId,
    runId,
    taskId: row.task_id,
    state: row.state,
    tryNumber: row.try_number,
    maxTries: row.max_tries,
    startDate: row.start_date,
    endDate: row.end_date,
    durationMs,
    worker: row.worker,
    error: row.error,
    childDagId: row.child_dag_id,
    childRunId: row.child_run_id,
    note: row.note,
  };
}

/** Throws DagRunNotFoundError. */
export async function readRun(db: Queryable, dagId: string, runId: string): Promise<DagRunRecord> {
  const row = await queryOne<RunRow>(db, GET_RUN, [dagId, runId]);
  if (!row) throw new DagRunNotFoundError(dagId, runId);
  return toRunRecord(row);
}

export async function readRuns(db: pg.Pool, dagId: string, page: ListRunsQuery): Promise<Page<DagRunRecord>> {
  const stmt = page.order === "asc" ? LIST_RUNS_ASC : LIST_RUNS_DESC;
  const states = page.state === undefined ? null : [page.state].flat();
  const rows = await query<RunRow & { total: number }>(db, stmt, [dagId, states, page.limit, page.offset]);
  // past the last page the window count is absent; ask for it separately
  const total = rows[0]?.total ?? (await queryOne<{ total: number }>(db, COUNT_RUNS, [dagId, states]))?.total;
  return { items: rows.map(toRunRecord), totalEntries: total ?? 0 };
}

export async function readTaskInstances(db: Queryable, dagId: string, runId: string): Promise<TaskInstanceRecord[]> {
  const rows = await query<TaskInstanceRow>(db, LIST_TASK_INSTANCES, [dagId, runId]);
  if (rows.length === 0) await readRun(db, dagId, runId); // throws when the run itself is missing
  return rows.map((row) => toTaskInstanceRecord(dagId, runId, row));
}

export async function readTaskLog(
  db: pg.Pool,
  dagId: string,
  runId: string,
  taskId: string,
  tryNumber: number,
): Promise<TaskLogRecord> {
  const ti = await queryOne<{ id: number; try_number: number }>(db, FIND_TASK_INSTANCE, [dagId, runId, taskId]);
  if (!ti) {
    await readRun(db, dagId, runId);
    throw new TaskInstanceNotFoundError(dagId, runId, taskId);
  }
  // tries are numbered 1..try_number; the running one has no task_tries row yet
  if (!Number.isInteger(tryNumber) || tryNumber < 1 || tryNumber > ti.try_number) {
    throw new TryNotFoundError(dagId, runId, taskId, tryNumber);
  }
  const lines = await query<{ at: Date; level: string; message: string }>(db, LOG_LINES, [ti.id, tryNumber]);
  return { dagId, runId, taskId, tryNumber, lines };
}
