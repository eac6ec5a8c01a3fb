// The step DAGs' position: read once per run and pinned. read_position applies the guard (SPEC: fail
// when the position is missing or below WORLD_STARTING_DAYS, naming the value read and the next step)
// and records what it read in the variable world_position_pin ({dag_id, run_id, position}); every
// later task of the run uses the pinned value, and fails naming both values if world_position moved
// under the run. The world resource makes step runs exclusive, so one pin serves every step DAG.
import { z } from "zod";
import { type TaskContext, NonRetryableError } from "../../src/runner/index.ts";
import { describePosition, stepRefusal, WORLD_POSITION_KEY } from "../../src/world/index.ts";
import { passport, readWorldPosition } from "./world-io.ts";

export const POSITION_PIN_KEY = "world_position_pin";

export interface StepPosition {
  /** The next day to play: the position counts the days already played (day 0 … position-1). */
  position: number;
  startDate: string;
}

const pinSchema = z.object({ dag_id: z.string(), run_id: z.string(), position: z.number().int() });

/** read_position: the guard, then the pin every later task of this run reads. */
export async function pinPosition(ctx: TaskContext<unknown>): Promise<StepPosition> {
  const reading = await readWorldPosition(ctx);
  const p = await passport();
  const refusal = stepRefusal(ctx.dagId, reading, p.WORLD_STARTING_DAYS);
  if (refusal !== undefined || reading.kind !== "number") throw new NonRetryableError(refusal ?? "unreachable");
  await ctx.variables.set(POSITION_PIN_KEY, JSON.stringify({ dag_id: ctx.dagId, run_id: ctx.runId, position: reading.value }));
  ctx.log.info(`pinned ${WORLD_POSITION_KEY} = ${reading.value} for this run (${POSITION_PIN_KEY})`);
  return { position: reading.value, startDate: p.start_date };
}

async function readPin(ctx: TaskContext<unknown>): Promise<number> {
  const text = await ctx.variables.get(POSITION_PIN_KEY);
  const parsed = text === null ? undefined : pinSchema.safeParse(JSON.parse(text));
  if (!parsed?.success) {
    throw new NonRetryableError(`${POSITION_PIN_KEY} is ${text ?? "not set"}: read_position did not pin this run's position; rerun the DAG`);
  }
  const pin = parsed.data;
  if (pin.run_id !== ctx.runId || pin.dag_id !== ctx.dagId) {
    throw new NonRetryableError(
      `${POSITION_PIN_KEY} belongs to ${pin.dag_id}/${pin.run_id}, not to this run: another step run started meanwhile; ` +
        "this run stops so the two cannot play the same day",
    );
  }
  return pin.position;
}

/**
 * The pinned position for a later task. `allowedAfter` is the value this run's own set_position
 * writes: a retried set_position (or a task after it) finds the variable there, not at the pin.
 */
export async function pinnedPosition(ctx: TaskContext<unknown>, allowedAfter?: (pinned: number) => number): Promise<StepPosition> {
  const pinned = await readPin(ctx);
  const reading = await readWorldPosition(ctx);
  const now = reading.kind === "number" ? reading.value : undefined;
  if (now !== pinned && (allowedAfter === undefined || now !== allowedAfter(pinned))) {
    throw new NonRetryableError(
      `${describePosition(reading)}, but this run pinned ${pinned} at read_position: the position moved under the run ` +
        "(edited by hand, or another run set it); nothing further is played. Check the world (make check-clickhouse) before rerunning",
    );
  }
  return { position: pinned, startDate: (await passport()).start_date };
}
