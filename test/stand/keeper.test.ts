// The keeper's rule (src/keeper/policy.ts) on services made of plain state and a clock of our own:
// restarts with doubling backoff, crash-looping after the limit and cleared only by a new start
// request, a service wanted down left alone, a dependency waited for, a live process that does not
// serve stopped and started again. The keeper against real processes is test/faults/keeper-faults.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Keeper, restartDelayMs, type KeptService, type ServiceRecord } from "../../src/keeper/policy.ts";
import type { ExitInfo, PidRecord, Want } from "../../src/services/supervisor.ts";
import { keptServices } from "../../src/keeper/kept-services.ts";
import { keptInfrastructure, standContext } from "../../src/stand/stand.ts";
import { loadStandConfig } from "../../src/config/stand.ts";
import { ManualClock } from "../../testkit/clock.ts";

type Clock = ManualClock;

class FakeService implements KeptService {
  readonly logFiles = [];
  live: PidRecord | undefined;
  serving = true;
  wanted: Want | undefined;
  starts = 0;
  stops = 0;
  /** What a start does: "runs" (a process that lives), "dies" (exits at once). */
  onStart: "runs" | "dies" = "runs";
  private nextPid = 1000;
  private exitOf: ((exit: ExitInfo) => void) | undefined;

  constructor(
    readonly name: string,
    private readonly clock: Clock,
    readonly needs: string[] = [],
  ) {
    this.wanted = { want: "up", by: "test", at: new Date(clock.t).toISOString() };
    this.live = { pid: this.nextPid++, marker: name, startedAt: new Date(clock.t - 3_600_000).toISOString() };
  }

  pidRecord = (): PidRecord | undefined => this.live;
  want = (): Want | undefined => this.wanted;
  serves = (): Promise<boolean> => Promise.resolve(this.live !== undefined && this.serving);
  logTail = (lines: number): string[] => [`${this.name} log line`].slice(0, lines);

  start = (onExit: (exit: ExitInfo) => void): Promise<number | undefined> => {
    this.starts += 1;
    this.exitOf = onExit;
    const pid = this.nextPid++;
    if (this.onStart === "runs") this.live = { pid, marker: this.name, startedAt: new Date(this.clock.t).toISOString() };
    else setImmediate(() => onExit({ code: 3, signal: null }));
    return Promise.resolve(pid);
  };

  stopHung = (): Promise<void> => {
    this.stops += 1;
    this.live = undefined;
    return Promise.resolve();
  };

  /** The process dies: as the keeper's child (it sees the exit) or not. */
  die(exit?: ExitInfo): void {
    this.live = undefined;
    if (exit) this.exitOf?.(exit);
  }

  askUp(clock: Clock): void {
    this.wanted = { want: "up", by: "make up", at: new Date(clock.t).toISOString() };
  }
}

const options = (clock: Clock) => ({
  hungAfterMs: 30_000,
  restartLimit: 4,
  healthyAfterMs: 60_000,
  maxBackoffMs: 8_000,
  startupMs: 20_000,
  now: clock.now,
  log: () => undefined,
});

function recordOf(keeper: Keeper, name: string): ServiceRecord {
  const record = keeper.records().find((r) => r.service === name);
  assert.ok(record, `a record of ${name}`);
  return record;
}

/** Ticks every `stepMs` until `until` holds or `maxMs` of fake time passed. */
async function tickUntil(keeper: Keeper, clock: Clock, until: () => boolean, stepMs = 250, maxMs = 600_000): Promise<void> {
  const end = clock.t + maxMs;
  while (clock.t < end) {
    await keeper.tick();
    await new Promise((resolve) => setImmediate(resolve)); // exits reported by the fake arrive
    if (until()) return;
    clock.advance(stepMs);
  }
  assert.fail("the condition never held");
}

describe("the keeper's rule", () => {
  it("the backoff doubles from 1 s to its cap", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => restartDelayMs(n, 8_000)), [1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it("a service that dies is started again after 1 s, its exit recorded, and counted", async () => {
    const clock = new ManualClock();
    const pg = new FakeService("postgres", clock);
    const keeper = new Keeper([pg], options(clock));
    await keeper.tick();
    assert.equal(recordOf(keeper, "postgres").state, "up");
    pg.die();
    await keeper.tick();
    const dead = recordOf(keeper, "postgres");
    assert.equal(dead.state, "restarting");
    assert.match(dead.lastExit?.how ?? "", /vanished/);
    assert.equal(pg.starts, 0, "not at once: after its backoff");
    clock.advance(999);
    await keeper.tick();
    assert.equal(pg.starts, 0);
    clock.advance(1);
    await keeper.tick();
    assert.equal(pg.starts, 1);
    await keeper.tick();
    const back = recordOf(keeper, "postgres");
    assert.equal(back.state, "up");
    assert.equal(back.restarts, 1);
  });

  it("a service that keeps dying at once is crash-looping after the limit, left down, its exit code and log kept; a new start request clears it", async () => {
    const clock = new ManualClock();
    const ch = new FakeService("clickhouse-ch2", clock);
    const keeper = new Keeper([ch], options(clock));
    await keeper.tick();
    ch.onStart = "dies";
    const startTimes: number[] = [];
    ch.die();
    const start = ch.start.bind(ch);
    ch.start = (onExit) => {
      startTimes.push(clock.t);
      return start(onExit);
    };
    await tickUntil(keeper, clock, () => recordOf(keeper, "clickhouse-ch2").state === "crash-looping");
    const looping = recordOf(keeper, "clickhouse-ch2");
    assert.equal(looping.quickDeaths, 4);
    assert.equal(ch.starts, 3, "the fourth death (the first was the kill) makes it crash-looping");
    // each death is seen one tick (250 ms) after its start, and the next start waits its backoff from there
    assert.deepEqual(startTimes.slice(1).map((t, i) => t - (startTimes[i] ?? 0)), [250 + 2000, 250 + 4000], "the backoff doubled between starts");
    assert.equal(looping.lastExit?.how, "exited with code 3");
    assert.deepEqual(looping.lastExit?.logTail, ["clickhouse-ch2 log line"]);
    assert.match(looping.message, /died 4 times in a row/);
    clock.advance(600_000);
    await keeper.tick();
    assert.equal(ch.starts, 3, "left down, however long");
    ch.onStart = "runs";
    clock.advance(1000);
    ch.askUp(clock); // make up
    await tickUntil(keeper, clock, () => recordOf(keeper, "clickhouse-ch2").state === "up");
    assert.equal(recordOf(keeper, "clickhouse-ch2").quickDeaths, 0);
  });

  it("quick deaths are in a row only across the keeper's own restarts: a process someone else started that dies begins a new row", async () => {
    const clock = new ManualClock();
    const runner = new FakeService("runner", clock);
    const keeper = new Keeper([runner], options(clock)); // restartLimit 4
    await keeper.tick();
    // each time: started on request (make up, a test's start), killed 5 s later, taken back by the keeper
    for (let round = 1; round <= 6; round++) {
      clock.advance(10_000);
      runner.askUp(clock);
      runner.live = { pid: 5000 + round, marker: "runner", startedAt: new Date(clock.t).toISOString() };
      await keeper.tick();
      clock.advance(5_000);
      runner.die();
      await keeper.tick();
      const record = recordOf(keeper, "runner");
      assert.equal(record.quickDeaths, 1, `round ${round}: a process the keeper did not start died: a row of one`);
      assert.equal(record.state, "restarting", `round ${round}: started again, not crash-looping`);
      await tickUntil(keeper, clock, () => recordOf(keeper, "runner").state === "up");
    }
    // and the keeper's own restarts still count in a row: dying at once after each, it gives up at the limit
    runner.onStart = "dies";
    runner.die();
    await tickUntil(keeper, clock, () => recordOf(keeper, "runner").state === "crash-looping");
    assert.equal(recordOf(keeper, "runner").quickDeaths, 4);
  });

  it("a service wanted down stays down", async () => {
    const clock = new ManualClock();
    const loader = new FakeService("loader", clock);
    const keeper = new Keeper([loader], options(clock));
    loader.wanted = { want: "down", by: "make down", at: new Date(clock.t).toISOString() };
    loader.die();
    for (let i = 0; i < 20; i++) {
      await keeper.tick();
      clock.advance(5000);
    }
    assert.equal(loader.starts, 0);
    assert.equal(recordOf(keeper, "loader").state, "stopped");
    assert.match(recordOf(keeper, "loader").message, /stopped on purpose by make down/);
  });

  it("a dead service waits for what it needs to serve", async () => {
    const clock = new ManualClock();
    const pg = new FakeService("postgres", clock);
    const runner = new FakeService("runner", clock, ["postgres"]);
    const keeper = new Keeper([pg, runner], options(clock));
    pg.serving = false;
    runner.die();
    clock.advance(5000);
    await keeper.tick();
    clock.advance(5000);
    await keeper.tick();
    assert.equal(runner.starts, 0);
    assert.match(recordOf(keeper, "runner").message, /waiting for postgres/);
    pg.serving = true;
    await keeper.tick();
    assert.equal(runner.starts, 1);
  });

  it("the stand's kept services say what each needs: a ClickHouse node is not started before ZooKeeper serves", () => {
    // keptServices only builds descriptions (no process is looked at); the stand config in force is read
    const needs = Object.fromEntries(keptServices(standContext(() => undefined), keptInfrastructure(standContext(() => undefined))).map((s) => [s.name, s.needs]));
    for (const node of loadStandConfig().clickhouse.nodes) assert.deepEqual(needs[`clickhouse-${node.name}`], ["zookeeper"], node.name);
    assert.deepEqual(needs.zookeeper, []);
    assert.deepEqual(needs.runner, ["postgres"]);
    assert.deepEqual(needs.loader, ["postgres", "kafka"]);
  });

  it("a live process that stops serving is given its hung time, then stopped and started again", async () => {
    const clock = new ManualClock();
    const pg = new FakeService("postgres", clock);
    const keeper = new Keeper([pg], options(clock));
    await keeper.tick();
    pg.serving = false; // a smart shutdown: alive, answering nothing
    await keeper.tick();
    assert.equal(recordOf(keeper, "postgres").state, "not-serving");
    clock.advance(29_000);
    await keeper.tick();
    assert.equal(pg.stops, 0);
    clock.advance(1000);
    await keeper.tick();
    assert.equal(pg.stops, 1);
    assert.match(recordOf(keeper, "postgres").lastExit?.how ?? "", /did not serve for 30 s/);
    pg.serving = true;
    await tickUntil(keeper, clock, () => recordOf(keeper, "postgres").state === "up");
    assert.equal(recordOf(keeper, "postgres").restarts, 1);
  });

  it("a young process that does not serve yet is starting, not hung", async () => {
    const clock = new ManualClock();
    const kafka = new FakeService("kafka", clock);
    const keeper = new Keeper([kafka], options(clock));
    kafka.live = { pid: 5, marker: "kafka", startedAt: new Date(clock.t).toISOString() };
    kafka.serving = false;
    for (let i = 0; i < 19; i++) {
      await keeper.tick();
      clock.advance(1000);
    }
    assert.equal(recordOf(keeper, "kafka").state, "starting");
    assert.equal(kafka.stops, 0);
  });

  it("restart counts and crash-looping survive the keeper's own restart", async () => {
    const clock = new ManualClock();
    const zk = new FakeService("zookeeper", clock);
    const previous: ServiceRecord[] = [
      { service: "zookeeper", state: "crash-looping", pid: null, restarts: 7, quickDeaths: 4, lastExit: null, nextStartAt: null, message: "died 4 times", since: "x", crashLoopWantAt: zk.wanted?.at ?? null },
    ];
    zk.die();
    const keeper = new Keeper([zk], options(clock), previous);
    await keeper.tick();
    assert.equal(zk.starts, 0, "still left down");
    assert.equal(recordOf(keeper, "zookeeper").restarts, 7);
  });
});
