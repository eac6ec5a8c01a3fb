// Deleting a run's history (Airflow's DELETE …/dagRuns/{id}): the run, the child runs its tasks
// started (deepest first, in the same statement), their task instances, tries and log lines. Only an
// ended run goes: a run that is queued or running (or has a child that is) is refused, so a hold on
// an exclusive resource or a try in flight never loses its row. The event log keeps what was done.
import type pg from "pg";
import { DagRunNotFoundError, RunNotDeletableError, TaskInstanceNotFoundError } from "./errors.ts";

/** The runs a root selection names and, recursively, the child runs their tasks started. */
const familyOf = (roots: string) => `
  with recursive family as (
    select r.id, r.dag_id, r.run_id, r.state from runner.dag_runs r where ${roots}
    union
    select c.id, c.dag_id, c.run_id, c.state
      from family f join runner.task_instances ti on ti.run_pk = f.id join runner.dag_runs c on c.parent_ti_id = ti.id
  )`;

/** Deletes an ended run and its child runs; the number of runs deleted. */
export function deleteRun(pool: pg.Pool, dagId: string, runId: string): Promise<number> {
  return deleteFamily(pool, familyOf("r.dag_id = $1 and r.run_id = $2"), [dagId, runId], (family) => {
    if (family.length === 0) throw new DagRunNotFoundError(dagId, runId);
    const open = openRuns(family);
    if (open) throw new RunNotDeletableError(dagId, runId, `run ${dagId}/${runId} cannot be deleted while ${open} has not ended: mark it failed (PATCH …/dagRuns/{id} state failed) first`);
  });
}

/** Airflow's DELETE /dags/{dag_id}: every run of the DAG (with the child runs they started) and every
 * user's favourite mark of it, and, for a stale DAG (its file gone), the DAG itself, its versions and
 * backfills. A DAG whose file is still there stays listed, with no history, as Airflow's parses it
 * back at once. Refused while any of its runs has not ended. Returns whether the DAG itself was removed. */
export async function deleteDag(pool: pg.Pool, dagId: string, stale: boolean): Promise<boolean> {
  const check = (family: FamilyRun[]) => {
    const open = openRuns(family);
    if (open) throw new RunNotDeletableError(dagId, "*", `DAG ${dagId} cannot be deleted while ${open} has not ended: mark its runs failed first`);
  };
  // every user's favourite mark goes with the history, as Airflow's delete_dag takes its dag_favorite rows
  await deleteFamily(pool, familyOf("r.dag_id = $1"), [dagId], check, (client) => client.query("delete from runner.dag_favorites where dag_id = $1", [dagId]));
  if (!stale) return false;
  // then the DAG itself: its versions and backfills point at it
  const client = await pool.connect();
  try {
    await client.query("begin");
    const { rows } = await client.query<{ open: boolean }>("select exists (select 1 from runner.dag_runs where dag_id = $1) as open", [dagId]);
    if (rows[0]?.open === true) throw new RunNotDeletableError(dagId, "*", `DAG ${dagId} got a new run while it was being deleted: try again`);
    await client.query("update runner.dags set latest_version_id = null where dag_id = $1", [dagId]);
    if ((await client.query<{ t: string | null }>("select to_regclass('runner.backfills')::text as t")).rows[0]?.t) {
      await client.query("delete from runner.backfills where dag_id = $1", [dagId]);
    }
    await client.query("delete from runner.dag_versions where dag_id = $1", [dagId]);
    await client.query("delete from runner.dags where dag_id = $1", [dagId]);
    await client.query("commit");
    return true;
  } catch (err) {
    await client.query("rollback").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

interface FamilyRun {
  id: string;
  dag_id: string;
  run_id: string;
  state: string;
}

function openRuns(family: readonly FamilyRun[]): string | null {
  const open = family.filter((r) => r.state !== "success" && r.state !== "failed");
  return open.length === 0 ? null : open.slice(0, 5).map((r) => `${r.dag_id}/${r.run_id} (${r.state})`).join(", ") + (open.length > 5 ? ` and ${open.length - 5} more` : "");
}

/** Locks the family, lets `check` refuse (by throwing), deletes it (cascading to task instances, tries, logs, holds)
 * and, in the same transaction, what `alsoDelete` deletes. */
async function deleteFamily(
  pool: pg.Pool,
  family: string,
  values: unknown[],
  check: (family: FamilyRun[]) => void,
  alsoDelete?: (client: pg.PoolClient) => Promise<unknown>,
): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const rows = (
      await client.query<FamilyRun>(`${family} select r.id, r.dag_id, r.run_id, r.state from runner.dag_runs r where r.id in (select id from family) order by r.id for update`, values)
    ).rows;
    check(rows);
    const ids = rows.map((r) => r.id);
    // a parent run outside the family that points at a deleted child keeps its task, without the link
    await client.query("update runner.task_instances set child_run_pk = null where child_run_pk = any($1::bigint[])", [ids]);
    await client.query("delete from runner.dag_runs where id = any($1::bigint[])", [ids]);
    if (alsoDelete) await alsoDelete(client);
    await client.query("commit");
    return ids.length;
  } catch (err) {
    await client.query("rollback").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Airflow's DELETE …/taskInstances/{task_id}: the task instance of an ended run, with its tries, log
 * lines and XCom, and its name taken out of the run's manifest (so a later clear of the run settles
 * without it, instead of waiting for a task that no longer has an instance). Refused while the run
 * is open, and for a task whose try started a child run (delete that run first). */
export async function deleteTaskInstance(pool: pg.Pool, dagId: string, runId: string, taskId: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const run = (await client.query<{ id: string; state: string }>("select id, state from runner.dag_runs where dag_id = $1 and run_id = $2 for update", [dagId, runId])).rows[0];
    if (!run) throw new DagRunNotFoundError(dagId, runId);
    if (run.state !== "success" && run.state !== "failed") {
      throw new RunNotDeletableError(dagId, runId, `task instance ${taskId} of ${dagId}/${runId} cannot be deleted while the run is ${run.state}: mark the run failed (or wait for its end) first`);
    }
    const ti = (await client.query<{ id: string }>("select id from runner.task_instances where run_pk = $1 and task_id = $2 for update", [run.id, taskId])).rows[0];
    if (!ti) throw new TaskInstanceNotFoundError(dagId, runId, taskId);
    const child = (await client.query<{ dag_id: string; run_id: string }>("select dag_id, run_id from runner.dag_runs where parent_ti_id = $1 limit 1", [ti.id])).rows[0];
    if (child) throw new RunNotDeletableError(dagId, runId, `task instance ${taskId} of ${dagId}/${runId} started run ${child.dag_id}/${child.run_id}: delete that run first`);
    await client.query("delete from runner.task_instances where id = $1", [ti.id]);
    await client.query("update runner.dag_runs set manifest = array_remove(manifest, $2) where id = $1", [run.id, taskId]);
    await client.query("commit");
  } catch (err) {
    await client.query("rollback").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
