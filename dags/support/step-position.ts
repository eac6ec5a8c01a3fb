// The step DAGs' guard (SPEC: fail when the position is missing or below WORLD_STARTING_DAYS, naming
// the value read and the next step). Every step task reads the position again through here rather
// than trusting an earlier task: a run carries no data between its tasks.
import type { TaskContext } from "../../src/runner/dag.ts";
import { NonRetryableError } from "../../src/runner/errors.ts";
import { stepRefusal } from "../../src/world/position.ts";
import { passport, readWorldPosition } from "./world-io.ts";

export interface StepPosition {
  /** The next day to play: the position counts the days already played (day 0 … position-1). */
  position: number;
  startDate: string;
}

export async function guardedPosition(ctx: TaskContext<unknown>): Promise<StepPosition> {
  const reading = await readWorldPosition(ctx);
  const p = await passport();
  const refusal = stepRefusal(ctx.dagId, reading, p.WORLD_STARTING_DAYS);
  if (refusal !== undefined || reading.kind !== "number") throw new NonRetryableError(refusal ?? "unreachable");
  return { position: reading.value, startDate: p.start_date };
}
