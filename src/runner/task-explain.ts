// A task instance's tries (Airflow's TaskInstanceHistory) and why it is not running now (Airflow's
// task instance dependencies): the run waiting for an exclusive resource and the run that holds
// it, the DAG paused or at its max_active_runs, upstream tasks not done, a retry's wait, a queued
// try waiting for a free worker, a waiting trigger's child run. Reads only.
import type pg from "pg";
import { queryOne, query, statement } from "./db.ts";
import { DagRunNotFoundError, TaskInstanceNotFoundError, TryNotFoundError } from "./errors.ts";
import type { TaskState } from "./types.ts";

export interface TaskTryRecord {
  tryNumber: number;
  /** The try's own end: success, failed, lost (its worker died and it was taken over), or running/deferred while it lasts. */
  state: "running" | "deferred" | "success" | "failed" | "lost";
  worker: string | null;
  startDate: Date;
  endDate: Date | null;
  error: string | null;
}

/** One reason a task instance does not run now (Airflow's TaskDependencyResponse). */
export interface TaskDependency {
  name: string;
  reason: string;
}

const TI = statement(
  "explain_task_instance",
  `select ti.id, ti.state, ti.try_number, ti.max_tries, ti.upstream, ti.next_retry_at, ti.start_date, ti.worker, ti.child_dag_id, ti.child_run_id,
          r.id as run_pk, r.state as run_state, r.waiting_for, d.is_paused, d.max_active_runs,
          (select count(*)::integer from runner.dag_runs o where o.dag_id = r.dag_id and o.state = 'running') as running_runs
     from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk join runner.dags d on d.dag_id = r.dag_id
    where r.dag_id = $1 and r.run_id = $2 and ti.task_id = $3`,
);
const UPSTREAM = statement(
  "explain_upstream",
  "select task_id, state from runner.task_instances where run_pk = $1 and task_id = any($2::text[]) order by task_id",
);
const TRIES = statement(
  "read_task_tries",
  "select try_number, state, worker, start_date, end_date, error from runner.task_tries where ti_id = $1 order by try_number",
);
const RUN_EXISTS = statement("explain_run_exists", "select 1 from runner.dag_runs where dag_id = $1 and run_id = $2");

interface TiRow {
  id: number;
  state: TaskState;
  try_number: number;
  max_tries: number;
  upstream: string[];
  next_retry_at: Date | null;
  start_date: Date | null;
  worker: string | null;
  child_dag_id: string | null;
  child_run_id: string | null;
  run_pk: number;
  run_state: string;
  waiting_for: string | null;
  is_paused: boolean;
  max_active_runs: number;
  running_runs: number;
}

async function taskInstanceRow(db: pg.Pool, dagId: string, runId: string, taskId: string): Promise<TiRow> {
  const row = await queryOne<TiRow>(db, TI, [dagId, runId, taskId]);
  if (row) return row;
  if (!(await queryOne(db, RUN_EXISTS, [dagId, runId]))) throw new DagRunNotFoundError(dagId, runId);
  throw new TaskInstanceNotFoundError(dagId, runId, taskId);
}

/** Every try so far, oldest first; a try still running has no task_tries row yet and is read from the task instance. */
export async function readTaskTries(db: pg.Pool, dagId: string, runId: string, taskId: string): Promise<TaskTryRecord[]> {
  const ti = await taskInstanceRow(db, dagId, runId, taskId);
  const rows = await query<{ try_number: number; state: TaskTryRecord["state"]; worker: string | null; start_date: Date; end_date: Date | null; error: string | null }>(db, TRIES, [ti.id]);
  const tries: TaskTryRecord[] = rows.map((r) => ({ tryNumber: r.try_number, state: r.state, worker: r.worker, startDate: r.start_date, endDate: r.end_date, error: r.error }));
  if (ti.try_number > 0 && !tries.some((t) => t.tryNumber === ti.try_number) && (ti.state === "running" || ti.state === "deferred") && ti.start_date) {
    tries.push({ tryNumber: ti.try_number, state: ti.state, worker: ti.worker, startDate: ti.start_date, endDate: null, error: null });
  }
  return tries;
}

export async function readTaskTry(db: pg.Pool, dagId: string, runId: string, taskId: string, tryNumber: number): Promise<TaskTryRecord> {
  const found = (await readTaskTries(db, dagId, runId, taskId)).find((t) => t.tryNumber === tryNumber);
  if (!found) throw new TryNotFoundError(dagId, runId, taskId, tryNumber);
  return found;
}

/** Why the task instance is not running now; empty when nothing holds it (it runs, or is about to). */
export async function explainTaskInstance(db: pg.Pool, dagId: string, runId: string, taskId: string, workerSlots: number | null): Promise<TaskDependency[]> {
  const ti = await taskInstanceRow(db, dagId, runId, taskId);
  const deps: TaskDependency[] = [];
  if (["success", "failed", "skipped", "upstream_failed", "removed"].includes(ti.state)) {
    return [{ name: "Task Instance State", reason: `Task is in the '${ti.state}' state, which is an end: clear it to run it again` }];
  }
  if (ti.state === "running") return [];
  if (ti.state === "deferred") {
    return [{ name: "Trigger", reason: `Task waits for its child run ${ti.child_dag_id ?? "?"}/${ti.child_run_id ?? "?"} to end; it holds no worker meanwhile` }];
  }
  if (ti.run_state === "queued") {
    if (ti.is_paused) deps.push({ name: "Dag Not Paused", reason: `DAG '${dagId}' is paused: its queued runs start when it is unpaused` });
    if (ti.waiting_for !== null) deps.push({ name: "Exclusive Resource", reason: `The run waits for an exclusive resource: ${ti.waiting_for}` });
    if (ti.running_runs >= ti.max_active_runs) {
      deps.push({ name: "Dag Run Limit", reason: `DAG '${dagId}' has ${ti.running_runs} running run(s), its max_active_runs is ${ti.max_active_runs}` });
    }
    if (deps.length === 0) deps.push({ name: "Dag Run State", reason: "The run is queued and about to start" });
    return deps;
  }
  const upstream = await query<{ task_id: string; state: TaskState }>(db, UPSTREAM, [ti.run_pk, ti.upstream]);
  const pending = upstream.filter((u) => u.state !== "success" && u.state !== "skipped");
  if (pending.length > 0) {
    deps.push({ name: "Trigger Rule", reason: `Task's trigger rule 'all_success' needs every upstream task done; not yet: ${pending.map((u) => `${u.task_id} (${u.state})`).join(", ")}` });
  }
  if (ti.state === "up_for_retry" && ti.next_retry_at !== null && ti.next_retry_at.getTime() > Date.now()) {
    deps.push({ name: "Not In Retry Period", reason: `Try ${ti.try_number} of ${ti.max_tries} failed; the next try waits until ${ti.next_retry_at.toISOString()}` });
  }
  if (ti.state === "queued") {
    deps.push({ name: "Pool Slots Available", reason: `Task is queued for a free worker slot${workerSlots === null ? "" : ` (each runner runs ${workerSlots} at once)`}` });
  }
  return deps;
}
