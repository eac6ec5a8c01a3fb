// The tries this process is executing right now: their abort controllers, their pending log
// lines, and their tokens (whose leases the heartbeat renews).
import type { ClaimedTry, LogLine, PendingLogLine } from "./task-tries.ts";

export interface TrackedTry {
  claim: ClaimedTry;
  controller: AbortController;
  /** Lines not yet written to Postgres. */
  pending: PendingLogLine[];
  startedAt: number;
}

export class InflightTries {
  private readonly byToken = new Map<string, TrackedTry>();

  get size(): number {
    return this.byToken.size;
  }

  track(claim: ClaimedTry): TrackedTry {
    const tracked: TrackedTry = { claim, controller: new AbortController(), pending: [], startedAt: performance.now() };
    this.byToken.set(claim.token, tracked);
    return tracked;
  }

  untrack(token: string): void {
    this.byToken.delete(token);
  }

  tokens(): string[] {
    return [...this.byToken.keys()];
  }

  all(): TrackedTry[] {
    return [...this.byToken.values()];
  }

  /** Takes every pending line of every try, for the periodic flush. */
  drainAll(): PendingLogLine[] {
    return this.all().flatMap((t) => takeLines(t));
  }

  abortAll(reason: Error): void {
    for (const tracked of this.byToken.values()) tracked.controller.abort(reason);
  }

  abort(token: string, reason: Error): void {
    this.byToken.get(token)?.controller.abort(reason);
  }
}

export function takeLines(tracked: TrackedTry): PendingLogLine[] {
  return tracked.pending.splice(0, tracked.pending.length);
}

export function addLine(tracked: TrackedTry, level: LogLine["level"], message: string): void {
  tracked.pending.push({ tiId: tracked.claim.tiId, tryNumber: tracked.claim.tryNumber, at: new Date(), level, message });
}
