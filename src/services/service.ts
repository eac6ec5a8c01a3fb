// The shape every stand service module fills in, and the generic start/stop/status steps over it.
// A service module says how to prepare, launch and probe its server; this module does the rest.
import type { StandConfig } from "../config/index.ts";
import { waitForHealthy } from "./health.ts";
import type { StandPaths } from "./paths.ts";
import { isProcessOurs, type ExitInfo, type StartSpec, type Supervisor } from "./supervisor.ts";
import { errorMessage } from "../errors.ts";
import { withStartFailPoint } from "./fail-points.ts";

export interface StandContext {
  config: StandConfig;
  paths: StandPaths;
  supervisor: Supervisor;
  print: (line: string) => void;
  /** The stand file this context was read from when it is not the one in force ($STAND_CONFIG): the
   * processes it starts get it as their STAND_CONFIG (a "second host" on this machine, docs/deploy.md). */
  configFile?: string;
}

export interface ServiceDefinition {
  /** Name of the pid file and of the service in messages: postgres, zookeeper, clickhouse-ch1, kafka. */
  name: string;
  port: number;
  stopSignal: NodeJS.Signals;
  stopGraceMs: number;
  logFiles: string[];
  /** What the health probe checks, in words. */
  healthWhat: string;
  /** What to try when it does not come up. */
  hint: string;
  /** Services that must serve before this one is started by the keeper (a ClickHouse node with replicated
   * tables exits at start when ZooKeeper does not answer, and each such exit would count as a death). */
  needs?: string[];
  /** Writes configs, creates data directories (idempotent). */
  prepare(ctx: StandContext): Promise<void>;
  launch(ctx: StandContext): StartSpec;
  /** True when healthy; may throw with the reason it is not. */
  probe(ctx: StandContext): Promise<boolean>;
  /** True while it serves at all, even if something it depends on is down (ClickHouse answers /ping
   * without ZooKeeper): what the keeper watches. The health probe when absent. */
  alive?(ctx: StandContext): Promise<boolean>;
  /** Runs once healthy, on every `up` (idempotent): databases, users. */
  afterHealthy?(ctx: StandContext): Promise<void>;
  /** The status line's probe, when it has more to say than healthy or not (Prometheus: its targets and alerts). */
  status?(ctx: StandContext): Promise<ProbeAnswer>;
}

export class PortTakenError extends Error {
  constructor(
    readonly service: string,
    readonly port: number,
  ) {
    super(
      `${service}: port ${port} on 127.0.0.1 is already in use by a process the stand did not start. ` +
        `Find it with: ss -ltnp 'sport = :${port}' — stop it, or change the port in stand.yaml.`,
    );
    this.name = "PortTakenError";
  }
}

/** True when the service serves (its liveness probe answers within a few seconds); never throws. */
export function serves(ctx: StandContext, service: ServiceDefinition): Promise<boolean> {
  return answersWithin(() => (service.alive ? service.alive(ctx) : service.probe(ctx)));
}

/** True when `check` says so within 5 s: a probe that hangs (a SIGSTOPped server) is "not serving". Never throws. */
export async function answersWithin(check: () => Promise<boolean>): Promise<boolean> {
  try {
    return await Promise.race([check(), sleepFalse(5000)]);
  } catch {
    // any failure of the probe means the service does not answer
    return false;
  }
}

function sleepFalse(ms: number): Promise<false> {
  return new Promise((resolve) => setTimeout(() => resolve(false), ms).unref());
}

/**
 * Starts the service unless its own process is already alive and serving; returns true when it
 * launched one. A process that lives but has not served for a while although it is past its start-up
 * time (a Postgres left in a smart shutdown answers every new connection "the database system is
 * shutting down") is down in all but name: it is stopped and started again.
 */
export async function launchIfNeeded(ctx: StandContext, service: ServiceDefinition, options: LaunchOptions = {}): Promise<boolean> {
  return ctx.supervisor.withStartLock(service.name, async () => {
    const record = ctx.supervisor.readPid(service.name);
    if (record && isProcessOurs(record)) {
      if (await servesWithin(ctx, service, record.startedAt)) {
        ctx.print(`${service.name}: already running (pid ${record.pid})`);
        ctx.supervisor.setWant(service.name, "up"); // asked for: from now on the keeper keeps it
        return false;
      }
      ctx.print(`${service.name}: pid ${record.pid} is alive but does not serve (${service.healthWhat}); stopping it to start it again`);
      await ctx.supervisor.stop(service.name, service.stopSignal, service.stopGraceMs, { keepWanted: true });
    }
    await launchNow(ctx, service, options);
    return true;
  });
}

/** A running process serves, or is still young enough to be starting (then health waits for it);
 * one past its start-up time gets 10 s to answer. */
async function servesWithin(ctx: StandContext, service: ServiceDefinition, startedAt: string): Promise<boolean> {
  const age = Date.now() - Date.parse(startedAt);
  if (!(age > ctx.config.health_timeout_seconds * 1000)) return true;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await serves(ctx, service)) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

export interface LaunchOptions {
  /** Told how the process ended (the keeper records it as the service's last exit). */
  onExit?: (exit: ExitInfo) => void;
}

/** Prepares and launches the service; the caller holds its start lock and knows it is not running. */
export async function launchNow(ctx: StandContext, service: ServiceDefinition, options: LaunchOptions = {}): Promise<number> {
  if (!(await ctx.supervisor.settle(service.name, service.port))) throw new PortTakenError(service.name, service.port);
  await service.prepare(ctx);
  const started = ctx.supervisor.start({ ...withStartFailPoint(ctx, service.launch(ctx)), onExit: options.onExit });
  ctx.print(`${service.name}: started pid ${started}, log ${service.logFiles.join(", ")}`);
  return started;
}

export async function waitUntilHealthy(ctx: StandContext, service: ServiceDefinition): Promise<void> {
  await waitForHealthy({
    service: service.name,
    port: service.port,
    what: service.healthWhat,
    probe: () => service.probe(ctx),
    isAlive: () => ctx.supervisor.runningPid(service.name) !== undefined,
    timeoutSeconds: ctx.config.health_timeout_seconds,
    logFiles: service.logFiles,
    hint: service.hint,
    print: ctx.print,
  });
  if (service.afterHealthy) await service.afterHealthy(ctx);
}

export interface ServiceStatus {
  name: string;
  port: number;
  pid: number | undefined;
  healthy: boolean;
  detail: string;
}

export async function serviceStatus(ctx: StandContext, service: ServiceDefinition): Promise<ServiceStatus> {
  const pid = ctx.supervisor.runningPid(service.name);
  return probedStatus(service.name, service.port, pid, async () => (service.status ? service.status(ctx) : { healthy: await service.probe(ctx) }));
}

export interface ProbeAnswer {
  healthy: boolean;
  /** What a healthy service reported about itself, for the status line ("state consuming"). */
  note?: string;
}

/** A status line from the pid we hold (if any) and a probe that may throw with the reason it is not healthy. */
export async function probedStatus(name: string, port: number, pid: number | undefined, probe: () => Promise<ProbeAnswer>): Promise<ServiceStatus> {
  try {
    const { healthy, note } = await probe();
    const who = pid === undefined ? "answers, but not started by this stand (no live pid file)" : `pid ${pid}`;
    const detail = healthy ? who : `${who}, probe said not ready`;
    return { name, port, pid, healthy, detail: note === undefined ? detail : `${detail}, ${note}` };
  } catch (err) {
    const why = pid === undefined ? "not running" : `pid ${pid} alive but unhealthy: ${errorMessage(err)}`;
    return { name, port, pid, healthy: false, detail: why };
  }
}
