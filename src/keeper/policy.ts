// The keeper's rule, without its process (src/stand/keeper-main.ts runs it; docs/stand.md
// "Self-healing" says it in words). Each tick it looks at every stand service, in start order:
//
//   wanted down (make down, a test, a DAG task stopped it)  → left alone: "stopped"
//   alive and serving                                        → "up"
//   alive, not serving, younger than its start-up time       → "starting"
//   alive, not serving for hung_after (a Postgres in smart   → stopped (still wanted up) and
//   shutdown answers every new client "shutting down")          started again, counted as a death
//   dead                                                     → started again after a backoff
//                                                              (1 s doubling to max_backoff), once
//                                                              what it needs serves
//   restart_limit quick deaths in a row (each within         → "crash-looping": left down, with
//   healthy_after of its start)                                 its last exit and log lines, until
//                                                              someone starts it again (make up)
//
// What it knows is written to <state_dir>/keeper/state.json after every tick, where
// `make check-services`, `make doctor` and the world waits read it.
import { errorMessage } from "../errors.ts";
import type { ExitInfo, PidRecord, Want } from "../services/index.ts";

export interface KeptService {
  name: string;
  logFiles: string[];
  /** Services that must serve before this one is started (the loader and the runner need Postgres). */
  needs: string[];
  /** Its live process of ours, or undefined. */
  pidRecord(): PidRecord | undefined;
  want(): Want | undefined;
  /** Answers at all (liveness, not full health); never throws. */
  serves(): Promise<boolean>;
  /** Starts it under its start lock, unless it runs by now or is no longer wanted up: the pid started, or undefined. */
  start(onExit: (exit: ExitInfo) => void): Promise<number | undefined>;
  /** Stops a live process that does not serve, leaving it wanted up. */
  stopHung(): Promise<void>;
  /** The last lines of its logs. */
  logTail(lines: number): string[];
}

export type KeptStateName = "up" | "starting" | "not-serving" | "restarting" | "waiting" | "crash-looping" | "stopped";

export interface LastExit {
  at: string;
  /** In words: "exited with code 3", "killed by SIGKILL", "pid 123 vanished …", "stopped by the keeper: …". */
  how: string;
  code: number | null;
  signal: string | null;
  /** How long the process had run, in seconds (null when unknown). */
  livedSeconds: number | null;
  logTail: string[];
}

export interface ServiceRecord {
  service: string;
  state: KeptStateName;
  pid: number | null;
  /** Starts by the keeper (since the stand's state began: they survive the keeper's own restarts). */
  restarts: number;
  /** Deaths in a row, each within healthy_after of its start. */
  quickDeaths: number;
  lastExit: LastExit | null;
  nextStartAt: string | null;
  message: string;
  /** When it entered its state. */
  since: string;
  /** The want record's time when it was declared crash-looping: a newer start request clears it. */
  crashLoopWantAt: string | null;
}

export interface KeeperOptions {
  hungAfterMs: number;
  restartLimit: number;
  healthyAfterMs: number;
  maxBackoffMs: number;
  /** How long a fresh process may take to serve before "not serving" counts (health_timeout_seconds). */
  startupMs: number;
  now?: () => number;
  log: (level: "info" | "warn" | "error", message: string, fields: Record<string, unknown>) => void;
}

interface Tracked {
  record: ServiceRecord;
  /** The pid last seen alive, and when it started. */
  seenPid: number | undefined;
  seenStartedAt: number;
  notServingSince: number | undefined;
  nextStartAt: number | undefined;
  /** Exit statuses of the processes the keeper started (only a parent sees them). */
  exits: Map<number, { exit?: ExitInfo }>;
}

/** The backoff before start number `quickDeaths` + 1: 1 s, doubling, capped. */
export function restartDelayMs(quickDeaths: number, maxBackoffMs: number): number {
  return Math.min(maxBackoffMs, 1000 * 2 ** Math.max(0, quickDeaths - 1));
}

/** A last exit in one line, as check-services and the World page show it. */
export function describeLastExit(lastExit: LastExit | null | undefined): string | null {
  return lastExit ? `${lastExit.how} at ${lastExit.at}` : null;
}

export function describeExit(exit: ExitInfo): string {
  return exit.signal !== null ? `killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
}

export class Keeper {
  private readonly tracked = new Map<string, Tracked>();
  private readonly now: () => number;

  constructor(
    private readonly services: KeptService[],
    private readonly options: KeeperOptions,
    /** Records from the last state file: restart counts, last exits and crash-looping survive a keeper restart. */
    previous: ServiceRecord[] = [],
  ) {
    this.now = options.now ?? Date.now;
    for (const service of services) {
      const before = previous.find((r) => r.service === service.name);
      const record: ServiceRecord = {
        service: service.name,
        state: before?.state === "crash-looping" ? "crash-looping" : "stopped",
        pid: null,
        restarts: before?.restarts ?? 0,
        quickDeaths: before?.quickDeaths ?? 0,
        lastExit: before?.lastExit ?? null,
        nextStartAt: null,
        message: before?.state === "crash-looping" ? before.message : "not looked at yet",
        since: before?.since ?? new Date(this.now()).toISOString(),
        crashLoopWantAt: before?.crashLoopWantAt ?? null,
      };
      this.tracked.set(service.name, { record, seenPid: undefined, seenStartedAt: 0, notServingSince: undefined, nextStartAt: undefined, exits: new Map() });
    }
  }

  records(): ServiceRecord[] {
    return this.services.map((s) => ({ ...this.track(s).record }));
  }

  /** One look at every service, in order; a service's `needs` are judged by what this tick saw. */
  async tick(): Promise<ServiceRecord[]> {
    const serving = new Map<string, boolean>();
    for (const service of this.services) {
      try {
        serving.set(service.name, await this.tend(service, serving));
      } catch (err) {
        this.options.log("error", `keeper: tending ${service.name} failed`, { service: service.name, err: errorMessage(err) });
        serving.set(service.name, false);
      }
    }
    return this.records();
  }

  private track(service: KeptService): Tracked {
    const t = this.tracked.get(service.name);
    if (!t) throw new Error(`keeper: ${service.name} is not a kept service`);
    return t;
  }

  private setState(t: Tracked, state: KeptStateName, message: string): void {
    if (t.record.state !== state) t.record.since = new Date(this.now()).toISOString();
    t.record.state = state;
    t.record.message = message;
    t.record.nextStartAt = t.nextStartAt === undefined ? null : new Date(t.nextStartAt).toISOString();
  }

  /** Looks at one service and acts; returns whether it serves. */
  private async tend(service: KeptService, serving: Map<string, boolean>): Promise<boolean> {
    const t = this.track(service);
    const now = this.now();
    const want = service.want();
    const live = service.pidRecord();
    t.record.pid = live?.pid ?? null;
    if (want?.want !== "up") {
      t.seenPid = live?.pid;
      t.nextStartAt = undefined;
      this.setState(t, "stopped", want ? `wanted down: stopped on purpose by ${want.by} at ${want.at}` : "never started on this stand (no want file): nothing to keep");
      return live !== undefined && (await service.serves());
    }
    if (t.record.state === "crash-looping") {
      if (want.at === t.record.crashLoopWantAt && live === undefined) return false;
      // started again since (make up, stand up): a fresh count
      this.options.log("info", `keeper: ${service.name} was asked to start again after crash-looping; watching it afresh`, { service: service.name, want });
      t.record.quickDeaths = 0;
      t.record.crashLoopWantAt = null;
      this.setState(t, "restarting", "asked to start again after crash-looping");
    }
    if (live) return this.tendLive(service, t, live, now);
    if (t.seenPid !== undefined) {
      const exit = t.exits.get(t.seenPid)?.exit;
      const how = exit ? describeExit(exit) : `pid ${t.seenPid} vanished (not started by this keeper, so its exit status is not seen: a kill -9, the OOM killer or a crash)`;
      this.recordDeath(service, t, want, how, exit, now - t.seenStartedAt, t.exits.has(t.seenPid));
      t.exits.delete(t.seenPid);
      t.seenPid = undefined;
    } else if (t.nextStartAt === undefined && t.record.state !== "crash-looping") {
      t.nextStartAt = now; // found dead while wanted up: start it now
    }
    if (t.record.state === "crash-looping" || t.nextStartAt === undefined) return false;
    if (now < t.nextStartAt) {
      this.setState(t, "restarting", `dead; next start in ${((t.nextStartAt - now) / 1000).toFixed(0)} s (after ${t.record.quickDeaths} quick death(s) in a row)`);
      return false;
    }
    const missing = service.needs.filter((name) => serving.get(name) !== true);
    if (missing.length > 0) {
      this.setState(t, "waiting", `dead; waiting for ${missing.join(", ")} to serve before starting it`);
      return false;
    }
    await this.start(service, t, want, now);
    return false;
  }

  private async tendLive(service: KeptService, t: Tracked, live: PidRecord, now: number): Promise<boolean> {
    if (t.seenPid !== live.pid) {
      t.seenPid = live.pid;
      t.seenStartedAt = Date.parse(live.startedAt) || now;
      t.notServingSince = undefined;
    }
    t.nextStartAt = undefined;
    const age = now - t.seenStartedAt;
    if (await service.serves()) {
      if (age >= this.options.healthyAfterMs) t.record.quickDeaths = 0; // a good start
      t.notServingSince = undefined;
      this.setState(t, "up", `pid ${live.pid} serves`);
      return true;
    }
    if (age < this.options.startupMs) {
      this.setState(t, "starting", `pid ${live.pid} started ${(age / 1000).toFixed(0)} s ago and does not serve yet`);
      return false;
    }
    t.notServingSince ??= now;
    const silentMs = now - t.notServingSince;
    if (silentMs < this.options.hungAfterMs) {
      this.setState(t, "not-serving", `pid ${live.pid} is alive but does not serve (${(silentMs / 1000).toFixed(0)} s); it is restarted after ${this.options.hungAfterMs / 1000} s`);
      return false;
    }
    const how = `stopped by the keeper: pid ${live.pid} was alive but did not serve for ${(silentMs / 1000).toFixed(0)} s`;
    this.options.log("warn", `keeper: ${service.name} ${how}; starting it again`, { service: service.name, pid: live.pid });
    await service.stopHung();
    const want = service.want();
    if (want) this.recordDeath(service, t, want, how, undefined, age, t.exits.has(live.pid));
    t.seenPid = undefined;
    return false;
  }

  /** `ownStart`: the process that died is one this keeper started (or failed to start). */
  private recordDeath(service: KeptService, t: Tracked, want: Want, how: string, exit: ExitInfo | undefined, livedMs: number, ownStart: boolean): void {
    const r = t.record;
    // "in a row" is a row of the keeper's own restarts: a process someone else started (make up,
    // stand-up, a runner started again by hand) that dies begins a new row, whatever came before
    r.quickDeaths = livedMs < this.options.healthyAfterMs && ownStart ? r.quickDeaths + 1 : 1;
    r.lastExit = {
      at: new Date(this.now()).toISOString(),
      how,
      code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      livedSeconds: livedMs > 0 ? Math.round(livedMs / 1000) : null,
      logTail: service.logTail(8),
    };
    if (r.quickDeaths >= this.options.restartLimit) {
      t.nextStartAt = undefined;
      r.crashLoopWantAt = want.at;
      const last = r.lastExit.logTail.slice(-3).join(" | ") || "(its log is empty)";
      this.setState(
        t,
        "crash-looping",
        `died ${r.quickDeaths} times in a row within ${this.options.healthyAfterMs / 1000} s of its start (last: ${how}); left down. ` +
          `Last log lines: ${last}. Fix the cause (make doctor), then make up starts it again`,
      );
      this.options.log("error", `keeper: ${service.name} is crash-looping; left down`, { service: service.name, lastExit: r.lastExit });
      return;
    }
    const delay = restartDelayMs(r.quickDeaths, this.options.maxBackoffMs);
    t.nextStartAt = this.now() + delay;
    this.setState(t, "restarting", `${how}; next start in ${(delay / 1000).toFixed(0)} s`);
    this.options.log("warn", `keeper: ${service.name} died (${how}); starting it again in ${delay} ms`, { service: service.name, quickDeaths: r.quickDeaths });
  }

  private async start(service: KeptService, t: Tracked, want: Want, now: number): Promise<void> {
    let pid: number | undefined;
    const slot: { exit?: ExitInfo } = {};
    try {
      pid = await service.start((exit) => {
        slot.exit = exit;
      });
    } catch (err) {
      this.recordDeath(service, t, want, `its start failed: ${errorMessage(err)}`, undefined, 0, true);
      return;
    }
    if (pid === undefined) return; // someone else started it meanwhile, or it was stopped: the next tick sees which
    t.exits.set(pid, slot);
    t.record.restarts += 1;
    t.record.pid = pid;
    t.seenPid = pid;
    t.seenStartedAt = now;
    t.nextStartAt = undefined;
    t.notServingSince = undefined;
    this.setState(t, "starting", `started again as pid ${pid} (restart ${t.record.restarts})`);
    this.options.log("info", `keeper: started ${service.name} again as pid ${pid}`, { service: service.name, pid, restarts: t.record.restarts });
  }
}
