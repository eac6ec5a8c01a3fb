// Scheduled DAGs: each tick creates at most one run per unpaused DAG whose schedule came due
// since its last scheduled run. Missed instants (runner down, DAG paused) are not caught up: only
// the latest one runs. Every runner process ticks; a transaction-level advisory lock makes one
// of them the leader for each tick, and last_scheduled_at (written in the same transaction)
// makes a run per instant impossible to create twice.
import { Cron } from "croner";
import type pg from "pg";
import type { Dag, Schedule } from "./dag.ts";
import { inTransaction, queryOne, statement } from "./db.ts";
import { DuplicateRunError } from "./errors.ts";
import type { DagRegistry } from "./registry.ts";
import { insertRun } from "./runs.ts";

const SCHEDULER_LOCK: [number, number] = [7303, 1];


const DAG_STATE = statement(
  "scheduler_dag_state",
  "select is_paused, last_scheduled_at from runner.dags where dag_id = $1 for update",
);
const MARK_SCHEDULED = statement(
  "scheduler_mark",
  "update runner.dags set last_scheduled_at = $2 where dag_id = $1",
);

/** The schedule instant a run is due for at `now`, or null when nothing is due. */
export function dueInstant(schedule: Schedule, lastScheduled: Date | null, now: Date): Date | null {
  if (schedule === null) return null;
  if (typeof schedule === "object") {
    const next = lastScheduled ? lastScheduled.getTime() + schedule.everySeconds * 1000 : -Infinity;
    return now.getTime() >= next ? now : null;
  }
  const latest = new Cron(schedule, { paused: true }).previousRuns(1, now)[0];
  if (!latest) return null;
  return lastScheduled && latest.getTime() <= lastScheduled.getTime() ? null : latest;
}

/** One scheduler tick; returns the ids of the runs it created. Each DAG is decided in its own
 * short transaction, so one DAG's trouble never holds up another's schedule. */
export async function createScheduledRuns(pool: pg.Pool, registry: DagRegistry, now: Date = new Date()): Promise<string[]> {
  const created: string[] = [];
  for (const dag of registry.list()) {
    if (dag.schedule === null) continue;
    const runId = await inTransaction(pool, async (client) => {
      const lock = await client.query<{ leader: boolean }>("select pg_try_advisory_xact_lock($1, $2) as leader", SCHEDULER_LOCK);
      return lock.rows[0]?.leader ? scheduleDag(client, dag, now) : null;
    });
    if (runId) created.push(runId);
  }
  return created;
}

async function scheduleDag(client: pg.PoolClient, dag: Dag, now: Date): Promise<string | null> {
  const state = await queryOne<{ is_paused: boolean; last_scheduled_at: Date | null }>(client, DAG_STATE, [dag.id]);
  if (!state || state.is_paused) return null;
  const due = dueInstant(dag.schedule, state.last_scheduled_at, now);
  if (!due) return null;
  const runId = `scheduled__${due.toISOString()}`;
  await queryOne(client, MARK_SCHEDULED, [dag.id, due]);
  // the savepoint keeps the mark when a run with this id already exists (made by hand, say)
  await client.query("savepoint scheduled_run");
  try {
    await insertRun(client, {
      dag,
      runId,
      runType: "scheduled",
      triggeredBy: "scheduler",
      conf: dag.parseConf({}),
      logicalDate: due,
      note: null,
    });
  } catch (err) {
    if (!(err instanceof DuplicateRunError)) throw err;
    await client.query("rollback to savepoint scheduled_run");
    return null;
  }
  return runId;
}
