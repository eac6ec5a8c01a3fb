// What every world task takes besides its own inputs: a signal that cancels it and a log line sink.
// A DAG passes ctx.signal and (line) => ctx.log.info(line); tests pass their own.

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
export class WorldTaskError extends Error {
  constructor(
    readonly step: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${step}: ${message}`, options);
    this.name = "WorldTaskError";
  }
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
