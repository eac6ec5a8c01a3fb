// What every world task takes besides its own inputs: a signal that cancels it and a log line sink.
// A DAG passes ctx.signal and (line) => ctx.log.info(line); tests pass their own.
import { classifyFault } from "./faults.ts";
import { StepError } from "../errors.ts";

export interface TaskIo {
  /** Aborted at the task's execution timeout, on lease loss, or when the runner stops. */
  signal: AbortSignal;
  /** One human-readable line of progress. */
  log: (line: string) => void;
}

/**
 * A world task failed: `message` says what failed and what to do. `step` names the task
 * (e.g. "createTopics") so the DAG log reads well even when only the message is shown.
 */
export class WorldTaskError extends StepError {
  override name = "WorldTaskError";
}

/** Throws the signal's reason, wrapped so it names the step, when the task was cancelled. */
export function throwIfAborted(signal: AbortSignal, step: string): void {
  if (!signal.aborted) return;
  throw new WorldTaskError(step, `cancelled: ${describeReason(signal.reason)}`, { cause: signal.reason });
}

function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  if (reason === undefined) return "aborted";
  return typeof reason === "string" ? reason : JSON.stringify(reason);
}

/** Sleeps `ms`, waking early (and throwing) when the signal aborts. */
export async function sleepUnlessAborted(ms: number, signal: AbortSignal, step: string): Promise<void> {
  throwIfAborted(signal, step);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
  throwIfAborted(signal, step);
}

export interface RideOut {
  signal: AbortSignal;
  step: string;
  log: (line: string) => void;
  /** Give up (rethrow the fault) past this time, ms since epoch. */
  deadline: number;
  /** Is this fault one a restart of the service outlives? Default: src/world/faults.ts's
   * classification says it is not permanent (transient or unknown: "Connection terminated
   * unexpectedly" carries no code). */
  transient?: (err: unknown) => boolean;
}

/**
 * Runs `work`, and while it fails with a transient fault (a service restarting: Postgres, Kafka,
 * ClickHouse) tries again every second until the deadline, saying so every 5 s, instead of letting
 * the fault cost the task one of its tries. A wait that spans a restart rides it out this way; a
 * permanent fault, or a transient one past the deadline, is thrown.
 */
export async function rideOutTransient<T>(what: string, work: () => Promise<T>, ride: RideOut): Promise<T> {
  const started = Date.now();
  let saidAt = 0;
  for (;;) {
    throwIfAborted(ride.signal, ride.step);
    try {
      return await work();
    } catch (err) {
      const transient = ride.transient ? ride.transient(err) : classifyFault(err) !== "permanent";
      if (!transient || Date.now() >= ride.deadline) throw err;
      if (Date.now() - saidAt >= 5000) {
        saidAt = Date.now();
        ride.log(`${what}: ${describeReason(err)}; a transient fault (a service restarting?), trying again every second (${((Date.now() - started) / 1000).toFixed(0)} s so far)`);
      }
    }
    await sleepUnlessAborted(1000, ride.signal, ride.step);
  }
}
