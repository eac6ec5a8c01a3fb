// Recording how a try ended, shared by callable tasks and waiting triggers.
import type { Engine } from "./engine.ts";
import { type TrackedTry, takeLines } from "./inflight.ts";
import { type TryResult, recordTaskResult } from "./task-tries.ts";

/** Records the try's end; a refused (late) result is logged loudly, never applied. */
export async function finishTry(engine: Engine, tracked: TrackedTry, result: TryResult): Promise<void> {
  const claim = tracked.claim;
  const recorded = await recordTaskResult(engine.pool, claim.tiId, claim.token, { ...result, log: takeLines(tracked) });
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
