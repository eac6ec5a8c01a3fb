// Deleting a run's history (Airflow's DELETE …/dagRuns/{id}): the run, the child runs its tasks
// started (deepest first, in the same statement), their task instances, tries and log lines. Only an
// ended run goes: a run that is queued or running (or has a child that is) is refused, so a hold on
// an exclusive resource or a try in flight never loses its row. The event log keeps what was done.
import type pg from "pg";
import { DagRunNotFoundError, RunNotDeletableError } from "./errors.ts";

const FAMILY = `
  with recursive family as (
    select r.id, r.dag_id, r.run_id, r.state from runner.dag_runs r where r.dag_id = $1 and r.run_id = $2
    union
    select c.id, c.dag_id, c.run_id, c.state
      from family f join runner.task_instances ti on ti.run_pk = f.id join runner.dag_runs c on c.parent_ti_id = ti.id
  )`;

/** Deletes an ended run and its child runs; the number of runs deleted. */
export async function deleteRun(pool: pg.Pool, dagId: string, runId: string): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const family = (
      await client.query<{ id: string; dag_id: string; run_id: string; state: string }>(
        `${FAMILY} select r.id, r.dag_id, r.run_id, r.state from runner.dag_runs r where r.id in (select id from family) order by r.id for update`,
        [dagId, runId],
      )
    ).rows;
    if (family.length === 0) throw new DagRunNotFoundError(dagId, runId);
    const open = family.filter((r) => r.state !== "success" && r.state !== "failed");
    if (open.length > 0) {
      const names = open.map((r) => `${r.dag_id}/${r.run_id} (${r.state})`).join(", ");
      throw new RunNotDeletableError(dagId, runId, `run ${dagId}/${runId} cannot be deleted while ${names} has not ended: mark it failed (PATCH …/dagRuns/{id} state failed) first`);
    }
    const ids = family.map((r) => r.id);
    // a parent run outside the family that points at a deleted child keeps its task, without the link
    await client.query("update runner.task_instances set child_run_pk = null where child_run_pk = any($1::bigint[])", [ids]);
    await client.query("delete from runner.dag_runs where id = any($1::bigint[])", [ids]);
    await client.query("commit");
    return ids.length;
  } catch (err) {
    await client.query("rollback").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
