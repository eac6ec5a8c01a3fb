// Operator controls over runs (000009_operator_controls.sql): mark a run failed or success, and
// clear task instances so they run again in the same run, on its own version or (000018) moved onto
// the DAG's latest. Both keep every try's history; a try in
// flight when its run is marked has its late result refused.
import type pg from "pg";
import { inTransaction, queryOne, query, statement, type Queryable } from "./db.ts";
import { DagRunNotFoundError, PG_ERROR, RunNotRebindableError, TaskInstanceNotFoundError, UnknownTaskIdsError } from "./errors.ts";
import { coerceError, errorCode } from "../errors.ts";
import { readTaskInstances } from "./read-models.ts";
import type { TaskInstanceRecord } from "./types.ts";
import type { Dag } from "./dag.ts";
import type { DagRegistry } from "./registry.ts";

const RUN_PK = statement("run_pk_of", "select id from runner.dag_runs where dag_id = $1 and run_id = $2");
const MARK = statement("mark_run", "select runner.mark_run($1, $2, $3) as changed");
const CLEAR = statement(
  "clear_task_instances",
  `select ti.task_id from runner.clear_task_instances($1, $2, $3, $4, $5, $6, $7, $8) as c(ti_id)
     join runner.task_instances ti on ti.id = c.ti_id order by ti.id`,
);

export interface ClearRequest {
  runId: string;
  /** Null: every task of the run (subject to onlyFailed). */
  taskIds: readonly string[] | null;
  onlyFailed: boolean;
  includeDownstream: boolean;
  includeUpstream: boolean;
  dryRun: boolean;
  /** Move the run onto the DAG's latest version first (Airflow's run_on_latest_version). */
  runOnLatestVersion?: boolean;
  by: string;
}

async function runPk(pool: Queryable, dagId: string, runId: string): Promise<number> {
  const row = await queryOne<{ id: number }>(pool, RUN_PK, [dagId, runId]);
  if (!row) throw new DagRunNotFoundError(dagId, runId);
  return row.id;
}

/** Marks the run (and its open child runs) failed or success; false when it already was. */
export async function markRun(pool: pg.Pool, dagId: string, runId: string, state: "failed" | "success", by: string): Promise<boolean> {
  const pk = await runPk(pool, dagId, runId);
  const row = await queryOne<{ changed: boolean }>(pool, MARK, [pk, state, by]);
  return row?.changed ?? false;
}

const TI_PK = statement(
  "ti_pk_of",
  `select ti.id from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk
    where r.dag_id = $1 and r.run_id = $2 and ti.task_id = $3`,
);
const MARK_TI = statement("mark_task_instance", "select runner.set_task_instance_state($1, $2, $3) as changed");
const SET_TI_NOTE = statement("set_task_instance_note", "update runner.task_instances set note = $2 where id = $1");

export type TaskInstanceMark = "success" | "failed" | "skipped";

/** Marks one task instance and/or sets its note (000012_task_instance_state.sql). */
export async function patchTaskInstance(
  pool: pg.Pool,
  dagId: string,
  runId: string,
  taskId: string,
  patch: { state?: TaskInstanceMark; note?: string | null },
  by: string,
): Promise<void> {
  const ti = await queryOne<{ id: number }>(pool, TI_PK, [dagId, runId, taskId]);
  if (!ti) {
    await runPk(pool, dagId, runId); // an unknown run is named as such
    throw new TaskInstanceNotFoundError(dagId, runId, taskId);
  }
  if (patch.state !== undefined) await query(pool, MARK_TI, [ti.id, patch.state, by]);
  if (patch.note !== undefined) await query(pool, SET_TI_NOTE, [ti.id, patch.note]);
}

const SET_NOTE = statement("set_run_note", "update runner.dag_runs set note = $3 where dag_id = $1 and run_id = $2 returning id");

export async function setRunNote(pool: pg.Pool, dagId: string, runId: string, note: string | null): Promise<void> {
  const row = await queryOne<{ id: number }>(pool, SET_NOTE, [dagId, runId, note]);
  if (!row) throw new DagRunNotFoundError(dagId, runId);
}

/** What a clear grants each task of the DAG: its configured tries again (retries + 1). For a run
 * made from a version, the clear takes the tries of that version instead (000018). */
export function triesGrantedByClear(dag: Dag): Record<string, number> {
  return Object.fromEntries([...dag.tasks.values()].map((t) => [t.id, t.retries + 1]));
}

const REBIND = statement(
  "rebind_run_to_latest",
  "select from_version, to_version, removed, added from runner.rebind_run_to_latest($1, $2)",
);
const RUN_TASK_IDS = statement(
  "run_task_ids",
  "select task_id from runner.task_instances where run_pk = $1 and state <> 'removed'",
);

/** What moving a run onto its DAG's latest version changed (null version: a run from before versions). */
export interface Rebind {
  fromVersion: number | null;
  toVersion: number | null;
  removed: string[];
  added: string[];
}

export interface ClearOutcome {
  /** The task ids cleared, or that would be on a dry run. */
  taskIds: string[];
  /** Present when the request asked for the latest version. */
  rebind?: Rebind;
  /** A dry run's task instances as they would be (the ones a rebind would add included); a real
   * clear leaves them to be read afterwards. */
  dryInstances?: TaskInstanceRecord[];
}

/** Rolls a dry run's transaction back once its answer is read. */
class DryRunRollback extends Error {
  constructor(readonly outcome: ClearOutcome) {
    super("dry run: rolled back");
  }
}

/** Clears what the request selects, on the run's own version, or first moves the run onto the
 * DAG's latest version (000018: removed tasks end `removed`, added ones are run). Everything
 * happens in one transaction; a dry run is rolled back after it is read. */
export async function clearTaskInstances(pool: pg.Pool, registry: DagRegistry, dagId: string, request: ClearRequest): Promise<ClearOutcome> {
  const dag = registry.get(dagId);
  try {
    return await inTransaction(pool, async (client) => {
      const pk = await runPk(client, dagId, request.runId);
      let rebind: Rebind | undefined;
      if (request.runOnLatestVersion === true) {
        const row = await queryOne<{ from_version: number | null; to_version: number | null; removed: string[]; added: string[] }>(client, REBIND, [pk, request.by]);
        if (row) rebind = { fromVersion: row.from_version, toVersion: row.to_version, removed: row.removed, added: row.added };
      }
      const known = new Set((await query<{ task_id: string }>(client, RUN_TASK_IDS, [pk])).map((r) => r.task_id));
      const unknown = (request.taskIds ?? []).filter((t) => !known.has(t));
      if (unknown.length > 0) throw new UnknownTaskIdsError(dagId, unknown);
      const rows = await query<{ task_id: string }>(client, CLEAR, [
        pk, request.taskIds, request.onlyFailed, request.includeDownstream, request.includeUpstream, JSON.stringify(triesGrantedByClear(dag)), request.by, request.dryRun,
      ]);
      const outcome: ClearOutcome = { taskIds: rows.map((r) => r.task_id), ...(rebind && { rebind }) };
      if (request.dryRun) throw new DryRunRollback({ ...outcome, dryInstances: await readTaskInstances(client, dagId, request.runId) });
      return outcome;
    });
  } catch (err) {
    if (err instanceof DryRunRollback) return err.outcome;
    if (errorCode(err) === PG_ERROR.OBJECT_NOT_IN_PREREQUISITE_STATE) throw new RunNotRebindableError(dagId, request.runId, coerceError(err).message);
    throw err;
  }
}
