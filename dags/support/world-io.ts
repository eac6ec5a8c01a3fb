// What the world DAG files share that is not a step: the TaskIo a world task takes, the passport's
// WORLD_STARTING_DAYS and the position as a task reads it. Steps themselves live in each DAG file,
// which calls tasks/ directly (no shared module of steps: world_recreate reuses by delegation).
import { z } from "zod";
import { defineDag, type TaskContext } from "../../src/runner/index.ts";
import { isTransientFault, readPosition, WORLD_POSITION_KEY, type PositionReading, type TaskIo, loadPassport, type Passport } from "../../src/world/index.ts";

export function taskIo(ctx: TaskContext<unknown>): TaskIo {
  return { signal: ctx.signal, log: (line) => ctx.log.info(line) };
}

/** Who asks the loader to consume or stop (kept in loader.control): dag/run/task. */
export function requester(ctx: TaskContext<unknown>): string {
  return `${ctx.dagId}/${ctx.runId}/${ctx.taskId}`;
}

/** The stand's passport (world.size), read when a task runs, so an updated passport needs no restart. */
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

/**
 * What every manual world DAG declares: no schedule, unpaused, one run at a time, and the world
 * resource held for the whole run (its child runs run inside that hold). etl_pipeline and world_live
 * (its schedule, its pause flag) take only part of it.
 */
export const WORLD_DAG = Object.freeze({
  schedule: null,
  exclusive: ["world"] as readonly string[],
  isPausedUponCreation: false,
  maxActiveRuns: 1,
});

/**
 * What every world DAG with tasks of its own shares about failure: transient faults (a readonly
 * replica, ZooKeeper, a broker or server that is down, timeouts) are retried with jittered
 * exponential backoff; permanent ones (syntax, permission, unknown table) fail at once
 * (src/world/faults.ts). A runner killed mid-task loses its try, and the takeover retries it.
 */
export function worldFailurePolicy(executionTimeoutMs: number) {
  return {
    isRetryable: isTransientFault,
    defaults: { retries: 2, retryDelayMs: 2_000, maxRetryDelayMs: 30_000, executionTimeoutMs },
  };
}

/** The conf of a world DAG that takes none. */
export const NO_PARAMS = z.object({}).strict();

/**
 * A world DAG as every one of them is declared: it holds the world exclusively, one run at a time,
 * unscheduled; its tasks retry transient faults within `taskTimeoutMs` each (none given: the DAG
 * only triggers others, as etl_pipeline); its file is dags/<id>.ts.
 */
export function worldDag<P extends z.ZodType>(id: string, description: string, params: P, taskTimeoutMs?: number) {
  const policy = taskTimeoutMs === undefined ? {} : worldFailurePolicy(taskTimeoutMs);
  return defineDag({ id, description, ...WORLD_DAG, params, ...policy, fileloc: `dags/${id}.ts` });
}
