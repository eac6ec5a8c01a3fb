// Time rules on a clock of the test's own (issue 33, "controlled time"): the login throttle's
// window, the doctor's stuck-run rule, the keeper's currency, the runner's heartbeat and reaper
// rhythm, the scheduler's due instants and the retry backoff. Minutes and hours of rule pass here
// in milliseconds; each rule keeps one real-time run on the stand to show the wiring
// (test/api/login-throttle.test.ts, test/faults/keeper-faults.test.ts, test/runner/takeover.test.ts,
// test/runner/retries-timeouts.test.ts). The keeper's own restart rule is test/stand/keeper.test.ts.
import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { LoginThrottle } from "../../src/api/login-throttle.ts";
import type { DagRunResponse } from "../../src/api/responses.ts";
import { heartbeatIntervalMs, reaperIntervalMs } from "../../src/runner/leases.ts";
import { dueInstant } from "../../src/runner/scheduler.ts";
import { keeperCurrency, KEEPER_STALE_MS, type KeeperStateFile } from "../../src/keeper/keeper-service.ts";
import { stuckRunFindings } from "../../src/world-ops/doctor.ts";

const T0 = Date.parse("2026-12-04T12:00:00Z");
const MIN = 60_000;

describe("the login throttle's window, on fake time", () => {
  beforeEach(() => mock.timers.enable({ apis: ["Date", "setTimeout"], now: T0 }));
  afterEach(() => mock.timers.reset());

  it("ten wrong passwords hold the name for the whole 300 s window, Retry-After counting down, and not a second more", async () => {
    const throttle = LoginThrottle.inMemory({ per_user: 10, per_address: 1000, window_seconds: 300 });
    for (let i = 0; i < 9; i++) await throttle.failed("tester", "127.0.0.1");
    assert.equal(await throttle.refusal("tester", "127.0.0.1"), undefined, "nine are within the limit");
    await throttle.failed("tester", "127.0.0.1");
    assert.deepEqual(await throttle.refusal("tester", "127.0.0.1"), { by: "user", retryAfterSeconds: 300 });
    mock.timers.tick(120_000);
    assert.deepEqual(await throttle.refusal("tester", "127.0.0.1"), { by: "user", retryAfterSeconds: 180 }, "two minutes in");
    mock.timers.tick(179_000);
    assert.deepEqual(await throttle.refusal("tester", "127.0.0.1"), { by: "user", retryAfterSeconds: 1 }, "a second before the end");
    mock.timers.tick(1_000);
    assert.equal(await throttle.refusal("tester", "127.0.0.1"), undefined, "the window ended: the name is free");
    await throttle.failed("tester", "127.0.0.1");
    assert.equal(await throttle.refusal("tester", "127.0.0.1"), undefined, "a new window counts from one");
  });

  it("the window runs from the first wrong password, not the last: late guesses do not prolong it", async () => {
    const throttle = LoginThrottle.inMemory({ per_user: 3, per_address: 1000, window_seconds: 60 });
    await throttle.failed("tester", "10.0.0.1");
    mock.timers.tick(50_000);
    await throttle.failed("tester", "10.0.0.1");
    await throttle.failed("tester", "10.0.0.1");
    assert.deepEqual(await throttle.refusal("tester", "10.0.0.1"), { by: "user", retryAfterSeconds: 10 });
    mock.timers.tick(10_000);
    assert.equal(await throttle.refusal("tester", "10.0.0.1"), undefined);
  });

  it("an address guessing many names is held for its window; a right password does not free the address", async () => {
    const throttle = LoginThrottle.inMemory({ per_user: 100, per_address: 5, window_seconds: 600 });
    for (let i = 0; i < 5; i++) await throttle.failed(`name-${i}`, "10.0.0.9");
    await throttle.succeeded("name-0");
    assert.deepEqual(await throttle.refusal("someone", "10.0.0.9"), { by: "address", retryAfterSeconds: 600 });
    mock.timers.tick(599_999);
    assert.equal((await throttle.refusal("someone", "10.0.0.9"))?.by, "address");
    mock.timers.tick(1);
    assert.equal(await throttle.refusal("someone", "10.0.0.9"), undefined);
  });
});

function run(state: "running" | "queued", dagRunId: string, startedMinAgo: number | null, queuedMinAgo: number | null, now: number): DagRunResponse {
  const iso = (minAgo: number | null): string | null => (minAgo === null ? null : new Date(now - minAgo * MIN).toISOString());
  return { dag_run_id: dagRunId, state, start_date: iso(startedMinAgo), queued_at: iso(queuedMinAgo) } as DagRunResponse;
}

describe("the doctor's stuck-run rule, on fake time", () => {
  it("a world run running 90 min is stuck, 89 min is not; queued 10 min is stuck, 9 is not", () => {
    const now = T0;
    const findings = stuckRunFindings(
      "world_next_day",
      [
        run("running", "long", 90, 95, now),
        run("running", "slow-but-fine", 89, 200, now),
        run("queued", "never-picked", null, 10, now),
        run("queued", "just-queued", null, 9, now),
      ],
      now,
    );
    assert.deepEqual(
      findings.map((f) => [f.subject, f.problem]),
      [
        ["world_next_day/long", "running for 90 min"],
        ["world_next_day/never-picked", "queued for 10 min"],
      ],
    );
    assert.match(findings[0]?.fix ?? "", /runner tasks world_next_day long/);
  });

  it("the same run crosses the line as the clock moves, and a run with no times is never judged", () => {
    const started = T0;
    const runs = [run("running", "r", 0, 0, started), { ...run("running", "timeless", null, null, started) }];
    assert.equal(stuckRunFindings("world_step", runs, started + 89 * MIN).length, 0);
    assert.deepEqual(
      stuckRunFindings("world_step", runs, started + 3 * 60 * MIN).map((f) => f.problem),
      ["running for 180 min"],
    );
  });
});

describe("the keeper's currency, on fake time", () => {
  const file = (pid: number, tickAt: number): KeeperStateFile => ({ keeper: { pid, startedAt: new Date(T0 - 3_600_000).toISOString(), tickAt: new Date(tickAt).toISOString() }, services: [] });

  it("current while its pid runs and it wrote within 15 s; stuck after; another pid's file or no file is never current", () => {
    assert.equal(KEEPER_STALE_MS, 15_000);
    assert.deepEqual(keeperCurrency(42, file(42, T0), T0 + 15_000), { ageMs: 15_000, current: true });
    assert.deepEqual(keeperCurrency(42, file(42, T0), T0 + 15_001), { ageMs: 15_001, current: false });
    assert.equal(keeperCurrency(43, file(42, T0), T0 + 1_000).current, false, "a file left by an earlier keeper");
    assert.equal(keeperCurrency(undefined, file(42, T0), T0).current, false, "no keeper runs");
    assert.deepEqual(keeperCurrency(42, undefined, T0), { ageMs: Infinity, current: false });
  });
});

describe("the runner's heartbeat and reaper rhythm", () => {
  it("beats three times a lease and reaps four times a lease, never faster than 250 ms", () => {
    assert.deepEqual([30, 6, 3, 0.3].map(heartbeatIntervalMs), [10_000, 2_000, 1_000, 250]);
    assert.deepEqual([30, 6, 3, 0.3].map(reaperIntervalMs), [7_500, 1_500, 750, 250]);
    for (const lease of [1, 2, 5, 30, 300]) {
      assert.ok(heartbeatIntervalMs(lease) * 2 < lease * 1000, `a try survives one missed beat in a ${lease} s lease`);
    }
  });
});

describe("the scheduler's due instants, a day of ticks on fake time", () => {
  it("an hourly cron makes 24 runs in a day of one-minute ticks after the noon run, each on the hour, none twice", () => {
    let last: Date | null = new Date(T0);
    const made: string[] = [];
    for (let t = T0; t <= T0 + 24 * 60 * MIN + MIN; t += MIN) {
      const due = dueInstant("0 * * * *", last, new Date(t));
      if (due) {
        assert.ok(t - due.getTime() <= MIN, `the run of ${due.toISOString()} was made within a tick of it, not at ${new Date(t).toISOString()}`);
        made.push(due.toISOString());
        last = due;
      }
    }
    assert.equal(made.length, 24);
    assert.ok(made.every((iso) => iso.endsWith(":00:00.000Z")), made.join(" "));
    assert.equal(new Set(made).size, 24);
    assert.deepEqual([made[0], made.at(-1)], ["2026-12-04T13:00:00.000Z", "2026-12-05T12:00:00.000Z"]);
  });

  it("a runner down for 5 hours catches up only the latest instant, then goes on hourly", () => {
    const last = new Date(T0);
    const back = new Date(T0 + 5 * 60 * MIN + 20 * MIN);
    assert.equal(dueInstant("0 * * * *", last, back)?.toISOString(), new Date(T0 + 5 * 60 * MIN).toISOString());
  });

  it("an every-N-seconds schedule is due N s after the last run, not before", () => {
    const last = new Date(T0);
    assert.equal(dueInstant({ everySeconds: 30 }, last, new Date(T0 + 29_999)), null);
    assert.equal(dueInstant({ everySeconds: 30 }, last, new Date(T0 + 30_000))?.getTime(), T0 + 30_000);
  });
});
