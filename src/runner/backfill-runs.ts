// How a backfill's dates become runs (000023_backfills.sql): the schedule's instants in a window,
// what each date gets (a new run, a cleared one, or Airflow's reason to skip it), and the step that
// makes the next runs while fewer than the backfill's max_active_runs are active. Every runner of a
// pool takes the step; a transaction-level leader lock beside the scheduler's, the backfill's row
// lock and unique run ids make a run per date impossible to create twice.
import { Cron } from "croner";
import type pg from "pg";
import type { Dag, Schedule } from "./dag.ts";
import { inTransaction, query, queryOne, statement } from "./db.ts";
import { DuplicateRunError } from "./errors.ts";
import { triesGrantedByClear } from "./operator.ts";
import type { DagRegistry } from "./registry.ts";
import { insertRun } from "./runs.ts";
import type { RunConf, RunState } from "./types.ts";

export const REPROCESS_BEHAVIORS = ["none", "failed", "completed"] as const;
export type ReprocessBehavior = (typeof REPROCESS_BEHAVIORS)[number];
/** Airflow's BackfillDagRunExceptionReason, for the dates that got no run. */
export type SkipReason = "in flight" | "already exists";

/** The leader of each step transaction, beside the scheduler's (7303, 1). */
const BACKFILL_LOCK: [number, number] = [7303, 2];
/** Pending dates decided per read: skips are cheap, so one transaction may pass many. */
const DATES_PER_READ = 200;

/**
 * The schedule's instants in [from, to], oldest first, at most `limit` of them. A cron schedule's
 * are its fire times (in the runner's time zone, as the scheduler's); an interval has none of its
 * own (the scheduler runs it `everySeconds` after its last run), so as Airflow's timedelta
 * schedules they start at `from`: from, from + interval, …
 */
export function scheduleInstants(schedule: Exclude<Schedule, null>, from: Date, to: Date, limit: number): Date[] {
  const instants: Date[] = [];
  if (typeof schedule === "object") {
    for (let t = from.getTime(); t <= to.getTime() && instants.length < limit; t += schedule.everySeconds * 1000) instants.push(new Date(t));
    return instants;
  }
  const cron = new Cron(schedule, { paused: true });
  // nextRun finds the first fire time after its argument: a millisecond back keeps `from` itself
  for (let next = cron.nextRun(new Date(from.getTime() - 1)); next && next.getTime() <= to.getTime() && instants.length < limit; next = cron.nextRun(next)) {
    instants.push(next);
  }
  return instants;
}

/** The runs a DAG already has at a logical date: any still active, and the state of the newest. */
export interface RunsAtDate {
  inFlight: boolean;
  latestState: RunState | null;
  latestPk: number | null;
}

export type DateDecision = { action: "create" } | { action: "clear"; runPk: number } | { action: "skip"; reason: SkipReason };

/** Airflow's rule (_get_dag_run_no_create_reason): a date with an active run is never touched;
 * otherwise `none` keeps any run, `failed` re-runs a failed one, `completed` any ended one. */
export function decideDate(runs: RunsAtDate, behavior: ReprocessBehavior): DateDecision {
  if (runs.latestPk === null || runs.latestState === null) return { action: "create" };
  if (runs.inFlight) return { action: "skip", reason: "in flight" };
  if (behavior === "none" || (behavior === "failed" && runs.latestState !== "failed")) return { action: "skip", reason: "already exists" };
  return { action: "clear", runPk: runs.latestPk };
}

/** The runs-at-date columns of one date, given `d.logical_date` and a left join `r` on dag_runs. */
const RUNS_AT_DATE = `coalesce(bool_or(r.state in ('queued', 'running')), false) as in_flight,
       (array_agg(r.state order by r.id desc) filter (where r.id is not null))[1] as latest_state,
       (array_agg(r.id order by r.id desc) filter (where r.id is not null))[1] as latest_pk`;

const RUNS_AT_DATES = statement(
  "backfill_runs_at_dates",
  `select d.logical_date, ${RUNS_AT_DATE}
     from unnest($2::timestamptz[]) with ordinality as d(logical_date, ord)
     left join runner.dag_runs r on r.dag_id = $1 and r.logical_date = d.logical_date
    group by d.logical_date, d.ord order by d.ord`,
);

interface RunsAtDateRow {
  in_flight: boolean;
  latest_state: RunState | null;
  latest_pk: number | null;
}

const toRunsAtDate = (row: RunsAtDateRow): RunsAtDate => ({ inFlight: row.in_flight, latestState: row.latest_state, latestPk: row.latest_pk });

/** What each of these dates would get now (the dry run's question), in their order. */
export async function decideDates(db: pg.Pool, dagId: string, dates: readonly Date[], behavior: ReprocessBehavior): Promise<DateDecision[]> {
  const rows = await query<RunsAtDateRow>(db, RUNS_AT_DATES, [dagId, dates]);
  return rows.map((row) => decideDate(toRunsAtDate(row), behavior));
}

interface BackfillRow {
  id: number;
  dag_id: string;
  dag_run_conf: RunConf | null;
  is_paused: boolean;
  reprocess_behavior: ReprocessBehavior;
  max_active_runs: number;
  run_on_latest_version: boolean;
  triggering_user_name: string | null;
}

const STEP_COLUMNS = "id, dag_id, dag_run_conf, is_paused, reprocess_behavior, max_active_runs, run_on_latest_version, triggering_user_name";
const LOCK_BACKFILL = statement("backfill_lock", `select ${STEP_COLUMNS} from runner.backfills where id = $1 and completed_at is null for update`);
// another runner (or the API) holds it: this tick leaves it to them
const TRY_LOCK_BACKFILL = statement("backfill_try_lock", `select ${STEP_COLUMNS} from runner.backfills where id = $1 and completed_at is null for update skip locked`);
const ACTIVE_RUNS = statement(
  "backfill_active_runs",
  `select count(*)::integer as active from runner.backfill_dag_runs b join runner.dag_runs r on r.id = b.dag_run_pk
    where b.backfill_id = $1 and r.state in ('queued', 'running')`,
);
const PENDING_DATES = statement(
  "backfill_pending_dates",
  `select b.id, b.logical_date, ${RUNS_AT_DATE}
     from runner.backfill_dag_runs b
     left join runner.dag_runs r on r.dag_id = $2 and r.logical_date = b.logical_date
    where b.backfill_id = $1 and b.decided_at is null
    group by b.id order by b.sort_ordinal limit $3`,
);
const RECORD_SKIPS = statement(
  "backfill_record_skips",
  "update runner.backfill_dag_runs set exception_reason = $2, decided_at = clock_timestamp() where id = any($1::bigint[])",
);
const RECORD_RUN = statement("backfill_record_run", "update runner.backfill_dag_runs set dag_run_pk = $2, decided_at = clock_timestamp() where id = $1");
const FINISHED = statement(
  "backfill_finished",
  `select not exists (select 1 from runner.backfill_dag_runs where backfill_id = $1 and decided_at is null)
      and not exists (select 1 from runner.backfill_dag_runs b join runner.dag_runs r on r.id = b.dag_run_pk
                       where b.backfill_id = $1 and r.state in ('queued', 'running')) as finished`,
);
const COMPLETE = statement("backfill_complete", "update runner.backfills set completed_at = clock_timestamp() where id = $1");
const OPEN_BACKFILLS = statement("backfills_open", "select id from runner.backfills where completed_at is null order by id");
const RETYPE_RUN = statement(
  "backfill_retype_run",
  "update runner.dag_runs set run_type = 'backfill', triggered_by = $2, conf = coalesce($3::jsonb, conf) where id = $1",
);
const REBIND = statement("backfill_rebind_run", "select 1 from runner.rebind_run_to_latest($1, $2)");
const CLEAR_RUN = statement("backfill_clear_run", "select 1 from runner.clear_task_instances($1, null, false, false, false, $2, $3, false)");

/** Airflow's run ids: `backfill__<logical date>`, so a date's run is one id in every runner of a pool. */
export function backfillRunId(logicalDate: Date): string {
  return `backfill__${logicalDate.toISOString()}`;
}

/** Who a backfill's runs were triggered by, as the API reads triggered_by (serialize.ts). */
function triggeredBy(b: BackfillRow): string {
  return b.triggering_user_name === null ? "backfill" : `backfill:user:${b.triggering_user_name}`;
}

interface PendingDate {
  id: number;
  logical_date: Date;
}

/** Makes a new run for the date; false when its run id is taken (a run made by hand). */
async function createDateRun(client: pg.PoolClient, dag: Dag, b: BackfillRow, date: PendingDate): Promise<boolean> {
  // the savepoint keeps the transaction when the id exists, as the scheduler's does
  await client.query("savepoint backfill_run");
  try {
    const runPk = await insertRun(client, {
      dag,
      runId: backfillRunId(date.logical_date),
      runType: "backfill",
      triggeredBy: triggeredBy(b),
      conf: b.dag_run_conf ?? dag.parseConf({}),
      logicalDate: date.logical_date,
      note: null,
    });
    await query(client, RECORD_RUN, [date.id, runPk]);
    return true;
  } catch (err) {
    if (!(err instanceof DuplicateRunError)) throw err;
    await client.query("rollback to savepoint backfill_run");
    return false;
  }
}

/** Runs the date's ended run again, as Airflow's _handle_clear_run: it becomes a backfill run (with
 * the backfill's conf, when one was given), on the DAG's latest version unless asked otherwise. */
async function clearDateRun(client: pg.PoolClient, dag: Dag, b: BackfillRow, date: PendingDate, runPk: number): Promise<void> {
  const by = `backfill ${b.id}`;
  // the run's lock before its row: the order every run change keeps (000002)
  await client.query("select pg_advisory_xact_lock($1)", [runPk]);
  await query(client, RETYPE_RUN, [runPk, triggeredBy(b), b.dag_run_conf === null ? null : JSON.stringify(b.dag_run_conf)]);
  if (b.run_on_latest_version) await query(client, REBIND, [runPk, by]);
  await query(client, CLEAR_RUN, [runPk, JSON.stringify(triesGrantedByClear(dag)), by]);
  await query(client, RECORD_RUN, [date.id, runPk]);
}

/** Decides pending dates in order until one gets a run (true) or none is left (false). */
async function runNextDate(client: pg.PoolClient, dag: Dag, b: BackfillRow): Promise<boolean> {
  for (;;) {
    const pending = await query<PendingDate & RunsAtDateRow>(client, PENDING_DATES, [b.id, b.dag_id, DATES_PER_READ]);
    if (pending.length === 0) return false;
    const skips = new Map<SkipReason, number[]>();
    const skip = (reason: SkipReason, id: number) => skips.set(reason, [...(skips.get(reason) ?? []), id]);
    let ran = false;
    for (const date of pending) {
      const decision = decideDate(toRunsAtDate(date), b.reprocess_behavior);
      if (decision.action === "clear") await clearDateRun(client, dag, b, date, decision.runPk);
      ran = decision.action === "clear" || (decision.action === "create" && (await createDateRun(client, dag, b, date)));
      if (ran) break;
      skip(decision.action === "skip" ? decision.reason : "already exists", date.id);
    }
    for (const [reason, ids] of skips) await query(client, RECORD_SKIPS, [ids, reason]);
    if (ran) return true;
  }
}

type StepOutcome = "ran" | "idle" | "completed" | "busy";

/** One step of one backfill, in the caller's transaction: at most one new (or cleared) run, so the
 * scheduler lock a run takes is held for one run at a time; or the backfill completes. */
async function stepBackfill(client: pg.PoolClient, registry: DagRegistry, id: number, wait: boolean): Promise<StepOutcome> {
  const b = await queryOne<BackfillRow>(client, wait ? LOCK_BACKFILL : TRY_LOCK_BACKFILL, [id]);
  if (!b) return "busy";
  // a DAG this runner does not serve (stale, or another runner's) waits for a runner that does
  if (!b.is_paused && registry.has(b.dag_id)) {
    const active = (await queryOne<{ active: number }>(client, ACTIVE_RUNS, [id]))?.active ?? 0;
    if (active < b.max_active_runs && (await runNextDate(client, registry.get(b.dag_id), b))) return "ran";
  }
  if (!(await queryOne<{ finished: boolean }>(client, FINISHED, [id]))?.finished) return "idle";
  await query(client, COMPLETE, [id]);
  return "completed";
}

/**
 * Makes the backfill's next runs until max_active_runs of them are active (or no date is left),
 * and completes it once every date is decided and its runs ended. `leader`: a tick, which leaves
 * the step to whichever runner holds the leader lock or the backfill; otherwise (the API, right
 * after a create or an unpause) it waits for the backfill's lock. Returns the runs made.
 */
export async function advanceBackfill(pool: pg.Pool, registry: DagRegistry, id: number, mode: "leader" | "wait"): Promise<number> {
  for (let made = 0; ; made++) {
    const outcome = await inTransaction(pool, async (client): Promise<StepOutcome> => {
      if (mode === "leader") {
        const lock = await client.query<{ leader: boolean }>("select pg_try_advisory_xact_lock($1, $2) as leader", BACKFILL_LOCK);
        if (!lock.rows[0]?.leader) return "busy";
      }
      return stepBackfill(client, registry, id, mode === "wait");
    });
    if (outcome !== "ran") return made;
  }
}

/** The runner's periodic step over every backfill not completed; returns the runs made. */
export async function advanceBackfills(pool: pg.Pool, registry: DagRegistry): Promise<number> {
  let made = 0;
  for (const { id } of await query<{ id: number }>(pool, OPEN_BACKFILLS, [])) made += await advanceBackfill(pool, registry, id, "leader");
  return made;
}
