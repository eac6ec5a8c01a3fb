// The shape every stand service module fills in, and the generic start/stop/status steps over it.
// A service module says how to prepare, launch and probe its server; this module does the rest.
import type { StandConfig } from "../config/stand.ts";
import { waitForHealthy } from "./health.ts";
import type { StandPaths } from "./paths.ts";
import { isPortOpen, type StartSpec, type Supervisor } from "./supervisor.ts";
import { errorMessage } from "../errors.ts";

export interface StandContext {
  config: StandConfig;
  paths: StandPaths;
  supervisor: Supervisor;
  print: (line: string) => void;
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
  /** Writes configs, creates data directories (idempotent). */
  prepare(ctx: StandContext): Promise<void>;
  launch(ctx: StandContext): StartSpec;
  /** True when healthy; may throw with the reason it is not. */
  probe(ctx: StandContext): Promise<boolean>;
  /** Runs once healthy, on every `up` (idempotent): databases, users. */
  afterHealthy?(ctx: StandContext): Promise<void>;
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

/** Starts the service unless its own process is already alive. Returns true when it launched one. */
export async function launchIfNeeded(ctx: StandContext, service: ServiceDefinition): Promise<boolean> {
  const pid = ctx.supervisor.runningPid(service.name);
  if (pid !== undefined) {
    ctx.print(`${service.name}: already running (pid ${pid})`);
    return false;
  }
  await ctx.supervisor.settle(service.name, service.port); // a process killed a moment ago may still hold the port
  if (await isPortOpen(service.port)) throw new PortTakenError(service.name, service.port);
  await service.prepare(ctx);
  const started = ctx.supervisor.start(service.launch(ctx));
  ctx.print(`${service.name}: started pid ${started}, log ${service.logFiles.join(", ")}`);
  return true;
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
  return probedStatus(service.name, service.port, pid, async () => ({ healthy: await service.probe(ctx) }));
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
