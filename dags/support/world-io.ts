// What the world DAG files share that is not a step: the TaskIo a world task takes, the passport's
// WORLD_STARTING_DAYS and the position as a task reads it. Steps themselves live in each DAG file,
// which calls tasks/ directly (no shared module of steps: world_recreate reuses by delegation).
import type { TaskContext } from "../../src/runner/dag.ts";
import { readPosition, WORLD_POSITION_KEY, type PositionReading } from "../../src/world/position.ts";
import type { TaskIo } from "../../src/world/io.ts";
import { loadPassport, type Passport } from "../../src/world/passport.ts";

export function taskIo(ctx: TaskContext<unknown>): TaskIo {
  return { signal: ctx.signal, log: (line) => ctx.log.info(line) };
}

/** The passport is read when a task runs, so an updated data/world-inventory.json needs no restart. */
export async function passport(): Promise<Passport> {
  return loadPassport();
}

export async function readWorldPosition(ctx: TaskContext<unknown>): Promise<PositionReading> {
  return readPosition(await ctx.variables.get(WORLD_POSITION_KEY));
}

/** Sets the position; the runner records the change with this run and task. */
export async function setWorldPosition(ctx: TaskContext<unknown>, value: number): Promise<void> {
  await ctx.variables.set(WORLD_POSITION_KEY, String(value));
  ctx.log.info(`${WORLD_POSITION_KEY} := ${value}`);
}
