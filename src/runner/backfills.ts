// Backfills (Airflow 3's, 000023_backfills.sql): runs of a scheduled DAG for the schedule's past
// instants in a window, at most max_active_runs of them active at once, made by the step in
// backfill-runs.ts. This module is what the API calls: create (with the first runs at once), the
// dry run, reads, pause, unpause and cancel.
import type pg from "pg";
import { advanceBackfill, decideDates, type ReprocessBehavior, scheduleInstants } from "./backfill-runs.ts";
import { type Dag, scheduleText } from "./dag.ts";
import { readDags } from "./dag-reads.ts";
import { inTransaction, query, queryOne, statement } from "./db.ts";
import { DagNotFoundError, DagStaleError, PG_ERROR, RunnerError } from "./errors.ts";
import { errorCode } from "../errors.ts";
import { orderBy, pageTotal, type SortKey } from "./list-sql.ts";
import type { DagRegistry } from "./registry.ts";
import type { Page, RunConf } from "./types.ts";

export { REPROCESS_BEHAVIORS, type ReprocessBehavior } from "./backfill-runs.ts";

/** Dates one backfill may hold: a window of minutes over years is refused, not queued for days. */
export const MAX_BACKFILL_DATES = 10_000;

export interface BackfillRecord {
  id: number;
  dagId: string;
  fromDate: Date;
  toDate: Date;
  /** null: none was given (new runs take the DAG's defaults, cleared runs keep their conf). */
  dagRunConf: RunConf | null;
  isPaused: boolean;
  reprocessBehavior: ReprocessBehavior;
  maxActiveRuns: number;
  runBackwards: boolean;
  runOnLatestVersion: boolean;
  triggeringUserName: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

/** Airflow's BackfillPostBody. */
export interface BackfillRequest {
  dagId: string;
  fromDate: Date;
  toDate: Date;
  runBackwards: boolean;
  dagRunConf: RunConf | null;
  reprocessBehavior: ReprocessBehavior;
  maxActiveRuns: number;
  /** Clear reprocessed runs onto the DAG's latest version (Airflow's default for backfills: yes). */
  runOnLatestVersion: boolean;
  triggeringUserName: string | null;
}

export const BACKFILL_SORT_FIELDS = ["id"] as const;
export type BackfillSortField = (typeof BACKFILL_SORT_FIELDS)[number];

export interface BackfillListQuery {
  dagId: string;
  limit: number;
  offset: number;
  orderBy: readonly SortKey<BackfillSortField>[];
}

export class BackfillNotFoundError extends RunnerError {
  constructor(readonly id: number) {
    super(`backfill ${id} does not exist`);
  }
}

/** The backfill (or its DAG's) state forbids the change: the DAG has one running, or it completed. */
export class BackfillConflictError extends RunnerError {
  constructor(readonly field: "dag_id" | "backfill_id", reason: string) {
    super(reason);
  }
}

/** A request no backfill can serve: no schedule, an empty or reversed window, too many dates. */
export class BackfillRefusedError extends RunnerError {
  constructor(readonly field: string, reason: string) {
    super(reason);
  }
}

interface Row {
  id: number;
  dag_id: string;
  from_date: Date;
  to_date: Date;
  dag_run_conf: RunConf | null;
  is_paused: boolean;
  reprocess_behavior: ReprocessBehavior;
  max_active_runs: number;
  run_backwards: boolean;
  run_on_latest_version: boolean;
  triggering_user_name: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

const toRecord = (r: Row): BackfillRecord => ({
  id: r.id, dagId: r.dag_id, fromDate: r.from_date, toDate: r.to_date, dagRunConf: r.dag_run_conf, isPaused: r.is_paused,
  reprocessBehavior: r.reprocess_behavior, maxActiveRuns: r.max_active_runs, runBackwards: r.run_backwards,
  runOnLatestVersion: r.run_on_latest_version, triggeringUserName: r.triggering_user_name, createdAt: r.created_at,
  updatedAt: r.updated_at, completedAt: r.completed_at,
});

const COLUMNS = `id, dag_id, from_date, to_date, dag_run_conf, is_paused, reprocess_behavior, max_active_runs, run_backwards,
  run_on_latest_version, triggering_user_name, created_at, updated_at, completed_at`;
const ONE = statement("backfill_read", `select ${COLUMNS} from runner.backfills where id = $1`);
const ACTIVE_OF_DAG = statement("backfill_active_of_dag", "select id from runner.backfills where dag_id = $1 and completed_at is null");
const INSERT = statement(
  "backfill_insert",
  `insert into runner.backfills (dag_id, from_date, to_date, dag_run_conf, reprocess_behavior, max_active_runs, run_backwards,
                                 run_on_latest_version, triggering_user_name)
   values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning id`,
);
const INSERT_DATES = statement(
  "backfill_insert_dates",
  `insert into runner.backfill_dag_runs (backfill_id, logical_date, sort_ordinal)
   select $1, d.logical_date, d.ord from unnest($2::timestamptz[]) with ordinality as d(logical_date, ord)`,
);
const SET_PAUSED = statement("backfill_set_paused", `update runner.backfills set is_paused = $2 where id = $1 and completed_at is null returning ${COLUMNS}`);
const LOCK_OPEN = statement("backfill_lock_open", "select completed_at from runner.backfills where id = $1 for update");
const CANCEL = statement("backfill_cancel", "update runner.backfills set is_paused = true, completed_at = clock_timestamp() where id = $1");
const FAIL_QUEUED = statement("backfill_fail_queued", "select runner.fail_queued_backfill_runs($1, $2) as failed");

/** The DAG as this runner can run it: DagStaleError for one whose file no longer declares it. */
async function servedDag(pool: pg.Pool, registry: DagRegistry, dagId: string): Promise<Dag> {
  if (registry.has(dagId)) return registry.get(dagId);
  const [recorded] = await readDags(pool, [dagId]);
  if (recorded?.isStale) throw new DagStaleError(dagId, recorded.fileloc);
  throw new DagNotFoundError(dagId);
}

/** The logical dates the request asks for, in the order they run; refuses what Airflow refuses. */
function plannedDates(dag: Dag, req: BackfillRequest, now: Date): Date[] {
  if (dag.schedule === null) {
    throw new BackfillRefusedError("dag_id", `DAG '${dag.id}' has no schedule: a backfill runs a schedule's past instants; trigger runs with a logical_date instead`);
  }
  if (req.fromDate > req.toDate) {
    throw new BackfillRefusedError("from_date", `from_date (${req.fromDate.toISOString()}) must not be after to_date (${req.toDate.toISOString()})`);
  }
  if (req.fromDate >= now) throw new BackfillRefusedError("from_date", "Backfill cannot be executed for future dates: from_date is after now");
  // only instants already past: the scheduler runs the ones to come
  const to = req.toDate < now ? req.toDate : now;
  const dates = scheduleInstants(dag.schedule, req.fromDate, to, MAX_BACKFILL_DATES + 1);
  if (dates.length > MAX_BACKFILL_DATES) {
    throw new BackfillRefusedError("to_date", `the window holds more than ${MAX_BACKFILL_DATES} instants of DAG '${dag.id}''s schedule; backfill a shorter window at a time`);
  }
  return req.runBackwards ? dates.reverse() : dates;
}

async function activeBackfillOf(pool: pg.Pool, dagId: string): Promise<number | undefined> {
  return (await queryOne<{ id: number }>(pool, ACTIVE_OF_DAG, [dagId]))?.id;
}

function alreadyRunning(dagId: string, id: number | undefined): BackfillConflictError {
  const which = id === undefined ? "" : ` (backfill ${id}; cancel it with PUT /api/v2/backfills/${id}/cancel or wait for it)`;
  return new BackfillConflictError("dag_id", `There is already a running backfill for DAG '${dagId}'${which}: a DAG has one backfill at a time`);
}

async function readBackfill(pool: pg.Pool, id: number): Promise<BackfillRecord> {
  const row = await queryOne<Row>(pool, ONE, [id]);
  if (!row) throw new BackfillNotFoundError(id);
  return toRecord(row);
}

/** 404 for a backfill that does not exist, else 409: it completed (or was cancelled). */
async function completedConflict(pool: pg.Pool, id: number): Promise<BackfillConflictError> {
  await readBackfill(pool, id);
  return new BackfillConflictError("backfill_id", `Backfill ${id} is already completed.`);
}

/** The logical dates the backfill would run now (Airflow's dry run): skipped dates left out. */
export async function dryRunBackfill(pool: pg.Pool, registry: DagRegistry, req: BackfillRequest): Promise<Date[]> {
  const dag = await servedDag(pool, registry, req.dagId);
  const dates = plannedDates(dag, req, new Date());
  if (req.dagRunConf !== null) dag.parseConf(req.dagRunConf);
  const decisions = await decideDates(pool, dag.id, dates, req.reprocessBehavior);
  return dates.filter((_, i) => decisions[i]?.action !== "skip");
}

/** Creates the backfill and its first runs at once (the next ones come with the runner's step). */
export async function createBackfill(pool: pg.Pool, registry: DagRegistry, req: BackfillRequest): Promise<BackfillRecord> {
  const dag = await servedDag(pool, registry, req.dagId);
  const dates = plannedDates(dag, req, new Date());
  const active = await activeBackfillOf(pool, dag.id);
  if (active !== undefined) throw alreadyRunning(dag.id, active);
  if (dates.length === 0) throw new BackfillRefusedError("from_date", `no instant of DAG '${dag.id}''s schedule (${scheduleText(dag) ?? "none"}) falls in the window`);
  const conf = req.dagRunConf === null ? null : dag.parseConf(req.dagRunConf);
  let id: number;
  try {
    id = await inTransaction(pool, async (client) => {
      const row = await queryOne<{ id: number }>(client, INSERT, [
        dag.id, req.fromDate, req.toDate, conf === null ? null : JSON.stringify(conf), req.reprocessBehavior, req.maxActiveRuns,
        req.runBackwards, req.runOnLatestVersion, req.triggeringUserName,
      ]);
      if (!row) throw new Error(`inserting a backfill of DAG '${dag.id}' returned no row`);
      await query(client, INSERT_DATES, [row.id, dates]);
      return row.id;
    });
  } catch (err) {
    // the index allows one open backfill per DAG: another create got there first
    if (errorCode(err) === PG_ERROR.UNIQUE_VIOLATION) throw alreadyRunning(dag.id, await activeBackfillOf(pool, dag.id));
    throw err;
  }
  await advanceBackfill(pool, registry, id, "wait");
  return readBackfill(pool, id);
}

export async function listBackfills(pool: pg.Pool, q: BackfillListQuery): Promise<Page<BackfillRecord>> {
  const order = orderBy(q.orderBy, { id: "id" }, "id", "id");
  const page = await pool.query<Row & { total: string }>(
    `select ${COLUMNS}, count(*) over () as total from runner.backfills where dag_id = $1 order by ${order} limit $2 offset $3`,
    [q.dagId, q.limit, q.offset],
  );
  const total = await pageTotal(pool, page.rows, q.offset, "select count(*) as total from runner.backfills where dag_id = $1", [q.dagId]);
  return { items: page.rows.map(toRecord), totalEntries: total };
}

/** Pause: no new runs (the active ones finish); unpause: the next ones are made at once. */
export async function setBackfillPaused(pool: pg.Pool, registry: DagRegistry, id: number, paused: boolean): Promise<BackfillRecord> {
  const row = await queryOne<Row>(pool, SET_PAUSED, [id, paused]);
  if (!row) throw await completedConflict(pool, id);
  if (paused) return toRecord(row);
  await advanceBackfill(pool, registry, id, "wait");
  return readBackfill(pool, id);
}

/** Completes the backfill and fails its queued runs, as Airflow's cancel; the running ones finish. */
export async function cancelBackfill(pool: pg.Pool, id: number, by: string): Promise<BackfillRecord> {
  const open = await inTransaction(pool, async (client) => {
    // the row lock keeps the step from making a run while the queued ones are failed
    const row = await queryOne<{ completed_at: Date | null }>(client, LOCK_OPEN, [id]);
    if (!row || row.completed_at !== null) return false;
    await query(client, CANCEL, [id]);
    await query(client, FAIL_QUEUED, [id, `cancel of backfill ${id} by ${by}`]);
    return true;
  });
  if (!open) throw await completedConflict(pool, id);
  return readBackfill(pool, id);
}

/** The RunnerService's backfill calls over one pool and registry (postgres-service.ts). */
export function backfillService(pool: pg.Pool, registry: DagRegistry) {
  return {
    listBackfills: (q: BackfillListQuery) => listBackfills(pool, q),
    getBackfill: (id: number) => readBackfill(pool, id),
    dryRunBackfill: (req: BackfillRequest) => dryRunBackfill(pool, registry, req),
    createBackfill: (req: BackfillRequest) => createBackfill(pool, registry, req),
    setBackfillPaused: (id: number, paused: boolean) => setBackfillPaused(pool, registry, id, paused),
    cancelBackfill: (id: number, by: string) => cancelBackfill(pool, id, by),
  };
}
