// Fault points of a runner started with fail points on (runner.fail_points: the test stand only).
// A fail point (000011) fails a try before its function runs or after it succeeded; a pause point
// (000014) holds the try there until a test releases it, so a fault test strikes at that exact
// moment of a run. A runner with fail points off never reads either table.
import type { Engine } from "./engine.ts";
import { NonRetryableError } from "./errors.ts";
import { coerceError } from "../errors.ts";
import { type TrackedTry, addLine } from "./inflight.ts";
import { queryOne, statement } from "./db.ts";

export type FaultPhase = "before" | "after";

const TAKE_FAIL_POINT = statement("take_fail_point", "select runner.take_fail_point($1, $2, $3) as taken");
const REACH_PAUSE_POINT = statement("reach_pause_point", "select runner.reach_pause_point($1, $2, $3, $4) as id");
const PAUSE_RELEASED = statement("pause_released", "select released_at is not null as released from runner.pause_points where id = $1");

const PAUSE_POLL_MS = 100;

/** A fail point armed for this task fails the try, before its function runs or after it
 * succeeded (its work done, its result discarded). */
export async function failPoint(engine: Engine, tracked: TrackedTry, phase: FaultPhase): Promise<void> {
  if (!engine.failPoints) return;
  const { dagId, taskId } = tracked.claim;
  const row = await queryOne<{ taken: boolean | null }>(engine.pool, TAKE_FAIL_POINT, [dagId, taskId, phase]);
  if (row?.taken !== true) return;
  throw new NonRetryableError(
    phase === "before"
      ? `fail point: ${dagId}.${taskId} failed before its function ran`
      : `fail point: ${dagId}.${taskId} failed after its function succeeded (its work is done; clear the task to run it again)`,
  );
}

/**
 * A pause point armed for this task holds the try until the point is released. While it waits it
 * reads the release every 100 ms and rides out a Postgres that is away (that is what tests do while
 * a try waits here); it gives up only when the try's signal aborts (deadline, lease lost, shutdown).
 */
export async function pausePoint(engine: Engine, tracked: TrackedTry, phase: FaultPhase): Promise<void> {
  if (!engine.failPoints) return;
  const { dagId, taskId, runId, tryNumber } = tracked.claim;
  const row = await queryOne<{ id: number | null }>(engine.pool, REACH_PAUSE_POINT, [dagId, taskId, phase, `${runId} try ${tryNumber}`]);
  const id = row?.id;
  if (id === null || id === undefined) return;
  const where = `pause point ${id}: ${dagId}.${taskId} ${phase === "before" ? "before its function" : "after its function, before its result is written"}`;
  addLine(tracked, "info", `${where}: waiting to be released`);
  engine.logger.info({ pausePoint: id, dagId, runId, taskId, phase }, "holding a try at a pause point");
  const signal = tracked.controller.signal;
  let unreachable = 0;
  for (;;) {
    if (signal.aborted) throw coerceError(signal.reason);
    try {
      const state = await queryOne<{ released: boolean }>(engine.pool, PAUSE_RELEASED, [id]);
      if (state?.released !== false) break; // released, or the row is gone
    } catch (err) {
      if (unreachable++ % 50 === 0) engine.logger.warn({ err, pausePoint: id }, "pause point: release not readable (Postgres away?); asking again");
    }
    await new Promise((resolve) => setTimeout(resolve, PAUSE_POLL_MS));
  }
  addLine(tracked, "info", `${where}: released${unreachable > 0 ? ` (Postgres unreachable for ${unreachable} reads meanwhile)` : ""}`);
}
