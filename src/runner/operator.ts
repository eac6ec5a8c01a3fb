// Operator controls over runs (000009_operator_controls.sql): mark a run failed or success, and
// clear task instances so they run again in the same run. Both keep every try's history; a try in
// flight when its run is marked has its late result refused.
import type pg from "pg";
import { queryOne, query, statement } from "./db.ts";
import { DagRunNotFoundError, TaskInstanceNotFoundError, UnknownTaskIdsError } from "./errors.ts";
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
  by: string;
}

async function runPk(pool: pg.Pool, dagId: string, runId: string): Promise<number> {
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

/** What a clear grants each task of the DAG: its configured tries again (retries + 1). */
export function triesGrantedByClear(dag: Dag): Record<string, number> {
  return Object.fromEntries([...dag.tasks.values()].map((t) => [t.id, t.retries + 1]));
}

/** Clears what the request selects; returns the task ids cleared (or that would be, on a dry run). */
export async function clearTaskInstances(pool: pg.Pool, registry: DagRegistry, dagId: string, request: ClearRequest): Promise<string[]> {
  const dag = registry.get(dagId);
  const unknown = (request.taskIds ?? []).filter((t) => !dag.tasks.has(t));
  if (unknown.length > 0) throw new UnknownTaskIdsError(dagId, unknown);
  const pk = await runPk(pool, dagId, request.runId);
  const rows = await query<{ task_id: string }>(pool, CLEAR, [
    pk, request.taskIds, request.onlyFailed, request.includeDownstream, request.includeUpstream, JSON.stringify(triesGrantedByClear(dag)), request.by, request.dryRun,
  ]);
  return rows.map((r) => r.task_id);
}
