// What the world DAG files share that is not a step: the TaskIo a world task takes, the passport's
// WORLD_STARTING_DAYS and the position as a task reads it. Steps themselves live in each DAG file,
// which calls tasks/ directly (no shared module of steps: world_recreate reuses by delegation).
import type { TaskContext } from "../../src/runner/dag.ts";
import { isTransientFault } from "../../src/world/faults.ts";
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

/**
 * The one world task whose repeat is not harmless: orders_ingest's pull_batch reads the orders
 * reader (a Kafka engine table, which commits what it read), so a try that failed during its INSERT
 * may have taken messages a retry would not find. It runs once; when it fails, clearing the step's
 * send_order_snapshot(s) with its downstream sends the snapshots again and pulls them into the same
 * orders_ingest run (docs/world.md, "When something fails"). Every other world task converges when
 * run again: replayed hits collapse in ods.event and ods.event_errors, re-sent snapshots in ods.order
 * and ods.order_errors, and a waiting trigger goes back to its failed child run.
 */
export const RUNS_ONCE = Object.freeze({ retries: 0 });
