// The SQL side of a try's life: claim (start a try, take a lease), record the result (fenced by
// the attempt token), defer to a child run, resume, renew leases, take over lost tries.
import type pg from "pg";
import { query, queryOne, statement } from "./db.ts";
import type { RunConf, TaskState } from "./types.ts";

export interface LogLine {
  at: Date;
  level: "info" | "warn" | "error";
  message: string;
}

export interface ClaimedTry {
  tiId: number;
  tryNumber: number;
  token: string;
  dagId: string;
  runId: string;
  taskId: string;
  conf: RunConf;
  logicalDate: Date | null;
  maxTries: number;
  /** The DAG version the run was made from (null: a run from before versions). */
  dagVersionId: string | null;
  /** From the moment the task was queued (its upstream's success committed) to this claim. */
  handoffMs: number;
}

/** How a try ended, as the executor saw it. */
export interface TryResult {
  outcome: "success" | "failed" | "lost";
  error: string | null;
  retryable: boolean;
  retryDelayMs: number;
  skip: readonly string[];
  log: readonly LogLine[];
}

export interface RecordedResult {
  accepted: boolean;
  taskState: TaskState;
  /** Set when a retry was scheduled: how long until it is due. */
  retryInMs: number | null;
}

// One statement: the task instance moves to running with a fresh token and lease (the try gets
// its task_tries row when it ends). Zero rows means the job is stale (task skipped, taken over
// or duplicated).
const CLAIM = statement(
  "claim_task_try",
  `update runner.task_instances ti
      set state = 'running', try_number = $2, attempt_token = gen_random_uuid(),
          start_date = clock_timestamp(), end_date = null, worker = $3,
          lease_expires_at = clock_timestamp() + make_interval(secs => $4::double precision),
          job_id = $5, error = null, next_retry_at = null
     from runner.dag_runs r
    where ti.id = $1 and ti.try_number = $2 - 1 and ti.state in ('queued', 'up_for_retry')
      and r.id = ti.run_pk and r.state = 'running'
   returning ti.task_id, ti.attempt_token, ti.max_tries, r.dag_id, r.run_id, r.conf, r.logical_date, r.dag_version_id,
             extract(epoch from ti.start_date - coalesce(ti.queued_at, ti.start_date))::double precision * 1000 as handoff_ms`,
);
const FINISH = statement("finish_task_try", "select * from runner.finish_task_try($1, $2, $3, $4, $5, $6, $7, $8)");
const TAKE_OVER = statement("take_over_lost_try", "select * from runner.take_over_lost_try($1, $2, $3, $4)");
const DEFER = statement(
  "defer_to_child_run",
  "select runner.defer_to_child_run($1, $2, $3, $4, $5, $6, $7, $8) as child_run_pk",
);
const DEFER_TO_PREVIOUS = statement(
  "defer_to_previous_child",
  "select * from runner.defer_to_previous_child($1, $2, $3, $4, $5)",
);
const RESUME = statement("resume_deferred_task", "select * from runner.resume_deferred_task($1, $2, $3)");
const RENEW = statement(
  "renew_leases",
  `update runner.task_instances
      set lease_expires_at = clock_timestamp() + make_interval(secs => $2::double precision)
    where attempt_token = any($1::uuid[]) and state = 'running'
   returning attempt_token`,
);
const APPEND_LOG = statement(
  "append_log_lines",
  `insert into runner.task_log_lines (ti_id, try_number, at, level, message)
   select x.ti_id, x.try_number, x.at, x.level, x.message
     from jsonb_to_recordset($1::jsonb) as x(ti_id bigint, try_number integer, at timestamptz, level text, message text)`,
);
const EXPIRED = statement(
  "expired_leases",
  `select ti.id, ti.attempt_token, ti.try_number, ti.max_tries, ti.task_id, ti.worker, r.dag_id, r.run_id
     from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk
    where ti.state = 'running' and ti.lease_expires_at < clock_timestamp()
    order by ti.lease_expires_at limit $1`,
);

export async function claimTaskTry(
  db: pg.Pool,
  tiId: number,
  tryNumber: number,
  worker: string,
  leaseSeconds: number,
  jobId: number | null,
): Promise<ClaimedTry | null> {
  const row = await queryOne<{
    task_id: string;
    attempt_token: string;
    max_tries: number;
    dag_id: string;
    run_id: string;
    conf: RunConf;
    logical_date: Date | null;
    dag_version_id: string | null;
    handoff_ms: number;
  }>(db, CLAIM, [tiId, tryNumber, worker, leaseSeconds, jobId]);
  if (!row) return null;
  return {
    tiId,
    tryNumber,
    token: row.attempt_token,
    dagId: row.dag_id,
    runId: row.run_id,
    taskId: row.task_id,
    dagVersionId: row.dag_version_id,
    conf: row.conf,
    logicalDate: row.logical_date,
    maxTries: row.max_tries,
    handoffMs: row.handoff_ms,
  };
}

function toRecorded(row: { accepted: boolean; task_state: TaskState; retry_in_ms: number | null } | undefined): RecordedResult {
  if (!row) throw new Error("the runner's result function returned no row");
  return { accepted: row.accepted, taskState: row.task_state, retryInMs: row.retry_in_ms };
}

/** One transaction: the result (fenced by the token), the try's last log lines, and all that
 * follows (successors enqueued, a retry scheduled, or the run failed). */
export async function recordTaskResult(db: pg.Pool, tiId: number, token: string, result: TryResult): Promise<RecordedResult> {
  const row = await queryOne<{ accepted: boolean; task_state: TaskState; retry_in_ms: number | null }>(db, FINISH, [
    tiId,
    token,
    result.outcome,
    result.error,
    result.retryable,
    Math.round(result.retryDelayMs),
    result.skip,
    JSON.stringify(result.log),
  ]);
  return toRecorded(row);
}

export async function takeOverLostTry(
  db: pg.Pool,
  tiId: number,
  token: string,
  retryDelayMs: number,
  reason: string,
): Promise<RecordedResult> {
  const row = await queryOne<{ accepted: boolean; task_state: TaskState; retry_in_ms: number | null }>(db, TAKE_OVER, [
    tiId,
    token,
    Math.round(retryDelayMs),
    reason,
  ]);
  return toRecorded(row);
}

export interface ChildRunSpec {
  dagId: string;
  runId: string;
  conf: RunConf;
  /** The manifest, as runs.manifestTasks renders it. */
  tasks: string;
  triggeredBy: string;
}

/** Creates the child run and defers the try, atomically; null when the try no longer holds. */
export async function deferToChildRun(
  db: pg.Pool,
  claim: ClaimedTry,
  child: ChildRunSpec,
  log: readonly LogLine[],
): Promise<number | null> {
  const row = await queryOne<{ child_run_pk: number | null }>(db, DEFER, [
    claim.tiId,
    claim.token,
    child.dagId,
    child.runId,
    JSON.stringify(child.conf),
    child.tasks,
    child.triggeredBy,
    JSON.stringify(log),
  ]);
  return row?.child_run_pk ?? null;
}

export type PreviousChild =
  | { outcome: "fenced" }
  | { outcome: "none" }
  | { outcome: "deferred"; childRunPk: number; childRunId: string; cleared: number };

/** A waiting trigger's try goes back to the child run an earlier try started, when that run failed
 * (its failed tasks are cleared and run again in it) or is still open; "none" when a new child run
 * is needed (no earlier child, it succeeded, or nothing in it can be cleared). */
export async function deferToPreviousChild(
  db: pg.Pool,
  claim: ClaimedTry,
  tries: Record<string, number>,
  by: string,
  log: readonly LogLine[],
): Promise<PreviousChild> {
  const row = await queryOne<{ fenced: boolean; child_run_pk: number | null; child_run_id: string | null; cleared: number }>(
    db,
    DEFER_TO_PREVIOUS,
    [claim.tiId, claim.token, JSON.stringify(tries), by, JSON.stringify(log)],
  );
  if (!row || row.fenced) return { outcome: "fenced" };
  if (row.child_run_pk === null || row.child_run_id === null) return { outcome: "none" };
  return { outcome: "deferred", childRunPk: Number(row.child_run_pk), childRunId: row.child_run_id, cleared: row.cleared };
}

export async function resumeDeferredTask(
  db: pg.Pool,
  tiId: number,
  childRunPk: number,
  retryDelayMs: number,
): Promise<RecordedResult & { resumeLatencyMs: number | null }> {
  const row = await queryOne<{
    accepted: boolean;
    task_state: TaskState;
    retry_in_ms: number | null;
    resume_latency_ms: number | null;
  }>(db, RESUME, [tiId, childRunPk, Math.round(retryDelayMs)]);
  return { ...toRecorded(row), resumeLatencyMs: row?.resume_latency_ms ?? null };
}

/** Renews the leases of the given tries; returns the tokens that still hold their task. */
export async function renewLeases(db: pg.Pool, tokens: readonly string[], leaseSeconds: number): Promise<Set<string>> {
  if (tokens.length === 0) return new Set();
  const rows = await query<{ attempt_token: string }>(db, RENEW, [tokens, leaseSeconds]);
  return new Set(rows.map((r) => r.attempt_token));
}

export interface PendingLogLine extends LogLine {
  tiId: number;
  tryNumber: number;
}

export async function appendLogLines(db: pg.Pool, lines: readonly PendingLogLine[]): Promise<void> {
  if (lines.length === 0) return;
  const rows = lines.map((l) => ({ ti_id: l.tiId, try_number: l.tryNumber, at: l.at, level: l.level, message: l.message }));
  await query(db, APPEND_LOG, [JSON.stringify(rows)]);
}

export interface ExpiredTry {
  tiId: number;
  token: string;
  tryNumber: number;
  maxTries: number;
  taskId: string;
  worker: string | null;
  dagId: string;
  runId: string;
}

export async function findExpiredLeases(db: pg.Pool, limit: number): Promise<ExpiredTry[]> {
  const rows = await query<{
    id: number;
    attempt_token: string;
    try_number: number;
    max_tries: number;
    task_id: string;
    worker: string | null;
    dag_id: string;
    run_id: string;
  }>(db, EXPIRED, [limit]);
  return rows.map((r) => ({
    tiId: r.id,
    token: r.attempt_token,
    tryNumber: r.try_number,
    maxTries: r.max_tries,
    taskId: r.task_id,
    worker: r.worker,
    dagId: r.dag_id,
    runId: r.run_id,
  }));
}
