// Recording how a try ended, shared by callable tasks and waiting triggers.
import { withConnectionPatience } from "./db.ts";
import type { Engine } from "./engine.ts";
import { type TrackedTry, takeLines } from "./inflight.ts";
import { type TryResult, recordTaskResult } from "./task-tries.ts";

/** How long a try keeps sending its result while Postgres is away (a restart): well inside the
 * lease, after which the reaper would take the try over anyway. */
const RESULT_PATIENCE_MS = 20_000;

/** Runs a write fenced by the try's token (its result, its deferral to a child run), sending it
 * again while its connection is lost, for up to RESULT_PATIENCE_MS. */
export function fencedWrite<T>(engine: Engine, tracked: TrackedTry, what: string, write: () => Promise<T>): Promise<T> {
  const claim = tracked.claim;
  return withConnectionPatience(write, RESULT_PATIENCE_MS, (err, attempts) =>
    engine.logger.warn({ err, attempts, dagId: claim.dagId, runId: claim.runId, taskId: claim.taskId, try: claim.tryNumber }, `${what}: the connection was lost; sending it again`),
  );
}

/** Records the try's end; a refused (late) result is logged loudly, never applied. A result whose
 * connection was lost (Postgres restarted under it) is sent again: the write is fenced by the try's
 * token, so a copy that did land makes the next one refused, never applied twice. */
export async function finishTry(engine: Engine, tracked: TrackedTry, result: TryResult): Promise<void> {
  const claim = tracked.claim;
  const log = takeLines(tracked);
  const recorded = await fencedWrite(engine, tracked, "recording a try's result", () => recordTaskResult(engine.pool, claim.tiId, claim.token, { ...result, log }));
  const seconds = (performance.now() - tracked.startedAt) / 1000;
  engine.metrics.taskDuration.observe({ dag_id: claim.dagId, state: result.outcome }, seconds);
  if (!recorded.accepted) {
    engine.metrics.refusedResults.inc();
    engine.logger.warn(
      { dagId: claim.dagId, runId: claim.runId, taskId: claim.taskId, try: claim.tryNumber, state: recorded.taskState },
      `late ${result.outcome} result refused: try ${claim.tryNumber} no longer holds the task`,
    );
    return;
  }
  if (recorded.retryInMs !== null) engine.wakeWorkersIn(recorded.retryInMs);
}
