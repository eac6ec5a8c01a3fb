// A clock of the test's own, for the rules that take an injected `now` (the keeper's restart rule,
// the loader's backoffs, the cycle log): time moves only when the test says so. Timers themselves
// run on node:test's mock.timers (test/time/rules-on-fake-time.test.ts).
export class ManualClock {
  constructor(public t: number = Date.parse("2026-12-02T12:00:00Z")) {}

  /** The injected `now`: bound, so it can be passed as it is. */
  readonly now = (): number => this.t;

  advance(ms: number): void {
    this.t += ms;
  }
}
