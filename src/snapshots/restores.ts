// The world's restores (world.restores, src/world/migrations/000003): which snapshot a world_restore
// put back, what the position was before and after, and by which run. Read by `make snapshots`, the
// snapshot list route and the World page beside the position's history.
import type pg from "pg";

/** One world snapshot as listed (make snapshots, GET /api/v2/world/snapshots, the World page). */
export interface SnapshotSummary {
  name: string;
  /** complete: restorable when its schema is today's; partial: a save that did not finish; unreadable. */
  state: "complete" | "partial" | "unreadable";
  position: number | null;
  takenAt: string | null;
  /** Disk only this snapshot holds, and bytes it shares with the live data through hard links. */
  ownBytes: number;
  sharedBytes: number;
  /** Digest of the DDL build it holds, and whether that is sql/ddl/ today. */
  schema: string | null;
  schemaIsToday: boolean | null;
  problem: string | null;
}

export interface RestoreRecord {
  snapshot: string;
  snapshotTakenAt: string;
  fromPosition: string | null;
  toPosition: number;
  dagId: string;
  runId: string;
  restoredAt?: string;
}

export async function recordRestore(db: pg.Pool | pg.Client, r: RestoreRecord): Promise<void> {
  await db.query(
    `insert into world.restores (snapshot, snapshot_taken_at, from_position, to_position, dag_id, run_id)
     values ($1, $2, $3, $4, $5, $6)`,
    [r.snapshot, r.snapshotTakenAt, r.fromPosition, r.toPosition, r.dagId, r.runId],
  );
}

/** The newest restores first. */
export async function readRestores(db: pg.Pool | pg.Client, limit = 20): Promise<RestoreRecord[]> {
  const { rows } = await db.query<{ snapshot: string; snapshot_taken_at: Date; from_position: string | null; to_position: number; dag_id: string; run_id: string; restored_at: Date }>(
    `select snapshot, snapshot_taken_at, from_position, to_position, dag_id, run_id, restored_at
       from world.restores order by restored_at desc, id desc limit $1`,
    [limit],
  );
  return rows.map((r) => ({
    snapshot: r.snapshot,
    snapshotTakenAt: r.snapshot_taken_at.toISOString(),
    fromPosition: r.from_position,
    toPosition: r.to_position,
    dagId: r.dag_id,
    runId: r.run_id,
    restoredAt: r.restored_at.toISOString(),
  }));
}

/** What the position was before `runId` first changed it (the run's first row of its history): the
 * world a restore replaced. Reads the runner's variable history; null when the run never set it. */
export async function positionBeforeRun(db: pg.Pool | pg.Client, key: string, runId: string): Promise<string | null> {
  const { rows } = await db.query<{ old_value: string | null }>(
    "select old_value from runner.variable_history where key = $1 and run_id = $2 order by id limit 1",
    [key, runId],
  );
  return rows[0]?.old_value ?? null;
}
