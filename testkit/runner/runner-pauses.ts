// The runner's pause points on the test stand (runner.pause_points, 000014): a fault test arms them
// before a run, waits until a try holds at one (the try waits until released, so the moment cannot
// pass unseen), strikes, and releases it. Read and written in the runner's database directly.
import { setTimeout as sleep } from "node:timers/promises";
import { withRunnerDb } from "../world/rest-world.ts";

export interface PauseBoundary {
  dag: string;
  task: string;
  phase: "before" | "after";
}

export interface RunnerPause {
  id: number;
  dag_id: string;
  task_id: string;
  phase: string;
  reached_by: string | null;
  reached: boolean;
  released: boolean;
}

/** Arms one pause point per boundary; returns their ids in the same order. */
export async function armRunnerPauses(boundaries: readonly PauseBoundary[], note: string): Promise<number[]> {
  return withRunnerDb(async (client) => {
    const ids: number[] = [];
    for (const b of boundaries) {
      const { rows } = await client.query<{ id: string }>("insert into runner.pause_points (dag_id, task_id, phase, note) values ($1, $2, $3, $4) returning id", [b.dag, b.task, b.phase, note]);
      ids.push(Number(rows[0]?.id));
    }
    return ids;
  });
}

async function readPause(id: number): Promise<RunnerPause | undefined> {
  return withRunnerDb(async (client) => {
    const { rows } = await client.query<Omit<RunnerPause, "id"> & { id: string }>(
      "select id, dag_id, task_id, phase, reached_by, reached_at is not null as reached, released_at is not null as released from runner.pause_points where id = $1",
      [id],
    );
    return rows[0] && { ...rows[0], id: Number(rows[0].id) };
  });
}

/** Waits until a try holds at pause point `id`; fails, naming the point, when none gets there in time. */
export async function pauseReached(id: number, timeoutMs = 180_000): Promise<RunnerPause> {
  const deadline = Date.now() + timeoutMs;
  let last: RunnerPause | undefined;
  for (;;) {
    last = await readPause(id);
    if (last?.reached) return last;
    if (Date.now() > deadline) {
      throw new Error(`no try reached pause point ${id} (${last ? `${last.dag_id}.${last.task_id} ${last.phase}` : "gone"}) within ${timeoutMs / 1000} s: the fault could not be staged`);
    }
    await sleep(100);
  }
}

export async function releasePause(id: number): Promise<void> {
  await withRunnerDb((client) => client.query("update runner.pause_points set released_at = now() where id = $1 and released_at is null", [id]));
}

/** Releases every pause point armed with `note` (reached or not), so nothing stays held after a test. */
export async function releasePauses(note: string): Promise<void> {
  await withRunnerDb((client) => client.query("update runner.pause_points set released_at = now(), reached_at = coalesce(reached_at, now()) where note = $1 and released_at is null", [note]));
}

/** Releases every pause point still holding or armed: a test process that died mid-test (or a
 * finally that ran while Postgres was away) leaves its points behind, and a run would wait on them. */
export async function releaseAllPauses(): Promise<number> {
  return withRunnerDb(async (client) => (await client.query("update runner.pause_points set released_at = now(), reached_at = coalesce(reached_at, now()) where released_at is null")).rowCount ?? 0);
}
