// Per-table backoff: a table (target) whose insert was held, for a transient, unknown or schema
// fault, waits for its own jittered exponential delay before it is tried again, so a table with a
// schema fault does not retry on every cycle while the other tables flow. A success resets it.
// When the whole sink is down, the sink gate and each held table back off side by side with the
// same formula (sink-gate.ts); a table is tried when both allow it.
import { backoffDelay, type BackoffOptions } from "./sink-gate.ts";
import type { Rejection } from "./rejections.ts";

export interface TableBackoffState {
  table: string;
  /** Held flushes in a row. */
  holds: number;
  /** When the table may be tried again (ms since epoch). */
  retryAt: number;
  lastDelayMs: number;
  /** Why its last flush was held. */
  heldBy: Rejection;
  /** When its first held flush in a row was (ms since epoch): how long its rows have been held. */
  since: number;
}

export class TableBackoffs {
  private readonly tables = new Map<string, TableBackoffState>();

  constructor(
    private readonly backoff: BackoffOptions,
    private readonly random: () => number = Math.random,
  ) {}

  /** A held flush of `table`: its next try waits for the next delay. */
  recordHeld(table: string, heldBy: Rejection, now: number): TableBackoffState {
    const before = this.tables.get(table);
    const holds = (before?.holds ?? 0) + 1;
    const delay = backoffDelay(this.backoff, holds, this.random);
    const state: TableBackoffState = { table, holds, retryAt: now + delay, lastDelayMs: delay, heldBy, since: before?.since ?? now };
    this.tables.set(table, state);
    return { ...state };
  }

  /** A flush of `table` that was not held. */
  recordSuccess(table: string): void {
    this.tables.delete(table);
  }

  mayRun(table: string, now: number): boolean {
    const state = this.tables.get(table);
    return state === undefined || now >= state.retryAt;
  }

  /** The earliest retry among held tables, or undefined when none is held. */
  nextRetryAt(): number | undefined {
    let next: number | undefined;
    for (const state of this.tables.values()) if (next === undefined || state.retryAt < next) next = state.retryAt;
    return next;
  }

  snapshot(): TableBackoffState[] {
    return [...this.tables.values()].map((state) => ({ ...state }));
  }
}
