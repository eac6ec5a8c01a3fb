// The sink-down gate: a flush cycle in which inserts were tried and every one failed transiently
// opens it (the sink-down gauge reads 1); the first cycle with a successful insert closes it. Any
// cycle in which inserts were tried and none succeeded (sink down, or a schema fault that holds
// its batch) makes the next one wait for a jittered exponential backoff; the commits stay held
// meanwhile, since nothing new was placed.
import type { Gauge } from "prom-client";

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  multiplier: number;
  jitter: number;
}

export interface CycleVerdict {
  /** INSERTs that succeeded this cycle (rows or dead letters). */
  succeeded: number;
  /** INSERTs that failed with a transient or unknown classification. */
  failedTransient: number;
  /** INSERTs that failed for another reason (data rejections are salvaged; schema faults are held). */
  failedOther: number;
}

export interface SinkGateState {
  down: boolean;
  consecutiveDownCycles: number;
  /** Cycles in a row in which inserts were tried and none succeeded. */
  consecutiveFailedCycles: number;
  /** When the next cycle may run (ms since epoch); 0 when no backoff is pending. */
  retryAt: number;
  lastDelayMs: number;
}

/** The delay before retry number `attempt` (1-based): exponential, capped, with "equal jitter"
 * (a `jitter` fraction of it drawn at random). The one backoff formula of the loader. */
export function backoffDelay(backoff: BackoffOptions, attempt: number, random: () => number): number {
  const base = Math.min(backoff.maxMs, backoff.initialMs * backoff.multiplier ** Math.max(0, attempt - 1));
  return Math.round(base * (1 - backoff.jitter) + base * backoff.jitter * random());
}

export class SinkGate {
  private state: SinkGateState = { down: false, consecutiveDownCycles: 0, consecutiveFailedCycles: 0, retryAt: 0, lastDelayMs: 0 };

  constructor(
    private readonly backoff: BackoffOptions,
    private readonly gauge: Gauge | undefined,
    private readonly random: () => number = Math.random,
  ) {
    this.gauge?.set(0);
  }

  /** Records a flush cycle's inserts; a cycle that tried nothing leaves the gate as it was. */
  record(verdict: CycleVerdict, now: number): SinkGateState {
    if (verdict.succeeded > 0) {
      this.state = { down: false, consecutiveDownCycles: 0, consecutiveFailedCycles: 0, retryAt: 0, lastDelayMs: 0 };
    } else if (verdict.failedTransient + verdict.failedOther > 0) {
      const down = verdict.failedOther === 0;
      const failedCycles = this.state.consecutiveFailedCycles + 1;
      const delay = backoffDelay(this.backoff, failedCycles, this.random);
      this.state = {
        down,
        consecutiveDownCycles: down ? this.state.consecutiveDownCycles + 1 : 0,
        consecutiveFailedCycles: failedCycles,
        retryAt: now + delay,
        lastDelayMs: delay,
      };
    }
    this.gauge?.set(this.state.down ? 1 : 0);
    return this.snapshot();
  }

  /** Whether a cycle may run now: at once unless the last one failed, else after its backoff. */
  mayRun(now: number): boolean {
    return now >= this.state.retryAt;
  }

  snapshot(): SinkGateState {
    return { ...this.state };
  }
}
