// The Kafka → ClickHouse loader (src/loader/main.ts) as a stand service: a detached process with its
// pid file and log under <state_dir>/loader/, started by `stand up` once Kafka and ClickHouse are
// healthy and stopped by `stand down` before them. It runs always; whether it consumes is decided by
// the world DAGs through a control row in Postgres, and its /health says which (`state`).
// Only a process whose command line carries the entry path is ever signalled (src/services/node-service.ts).
//
// loader.instances > 1: a group of loaders. Instance k is the service loader-k (its own state
// directory, pid file and log), serves /health and /metrics on loader.port + k - 1, is told which it
// is by STAND_INSTANCE=k, and joins the same consumer groups: Kafka splits the partitions between
// the members and moves a dead member's to the others. The first keeps the name `loader`.
import path from "node:path";
import { instancesOf, poolInstance, repoRoot, type StandConfig } from "../config/index.ts";
import {
  ensureNodeService,
  leftoverInstances,
  nodeServicePaths,
  nodeServicePid,
  stopNodeService,
  type EnsureOutcome,
  type NodeServicePaths,
  type NodeServiceSpec,
  type StopOutcome,
} from "./node-service.ts";
import { probedStatus, type ServiceStatus, type StandContext } from "./service.ts";

export const LOADER_SERVICE = "loader";
export const LOADER_ENTRY = path.join(repoRoot, "src", "loader", "main.ts");
/** SIGTERM makes the loader flush what it read and commit; 30 s before SIGKILL. */
const STOP_GRACE_MS = 30_000;
/** The loader imports only from src/ (its SQL included); dags/ and tasks/ changes leave it running. */
const FINGERPRINT = { dirs: ["src", "sql"], files: ["package-lock.json"] };

export interface LoaderOptions {
  /** The entry point to run; tests run a stand-in of their own. Default src/loader/main.ts. */
  entry?: string;
  /** Which instance of loader.instances (1-based). Default 1. */
  instance?: number;
}

export interface LoaderHealth {
  /** The loader's own word for what it does: stopped, consuming, … */
  state: string;
  /** Why it is degraded (its sink down, rows held): empty when healthy. */
  problems: string[];
}

export function loaderPaths(ctx: StandContext, instance = 1): NodeServicePaths {
  return nodeServicePaths(ctx, poolInstance(ctx.config, "loader", instance).name);
}

/** Base URL of a loader instance's /health, /metrics and /fail-points. */
export function loaderBaseUrl(config: StandConfig, instance = 1): string {
  return `http://${config.bind_host}:${poolInstance(config, "loader", instance).port}`;
}

export function loaderHealthUrl(config: StandConfig, instance = 1): string {
  return `${loaderBaseUrl(config, instance)}/health`;
}

/** Every loader instance of the stand config (loader.instances), the first first. */
export function loaderInstances(ctx: StandContext): number[] {
  return instancesOf(ctx.config, "loader").map((i) => i.index);
}

/** GET /health: its state when it answers 200 with status healthy; otherwise throws with the reason it gave. */
export async function loaderHealth(config: StandConfig, timeoutMs = 2000, instance = 1): Promise<LoaderHealth> {
  const response = await fetch(loaderHealthUrl(config, instance), { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  let body: { status?: unknown; state?: unknown; detail?: unknown; reason?: unknown; problems?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON: the text itself is the reason below
  }
  const state = typeof body.state === "string" ? body.state : "?";
  const reason = [body.reason, body.detail].find((r): r is string => typeof r === "string" && r !== "") ?? text.slice(0, 200);
  // degraded is running: it holds its rows while its sink is down (the status line says why)
  if (!response.ok || (body.status !== "healthy" && body.status !== "degraded")) {
    throw new Error(`health answered ${response.status}, status ${String(body.status)}, state ${state}: ${reason}`);
  }
  const problems = Array.isArray(body.problems) ? body.problems.filter((p): p is string => typeof p === "string") : [];
  return { state, problems };
}

export function loaderSpec(ctx: StandContext, options: LoaderOptions): NodeServiceSpec {
  const { name, port, index } = poolInstance(ctx.config, "loader", options.instance ?? 1);
  const healthUrl = loaderHealthUrl(ctx.config, index);
  return {
    name,
    entry: options.entry ?? LOADER_ENTRY,
    port,
    stopGraceMs: STOP_GRACE_MS,
    fingerprint: FINGERPRINT,
    healthWhat: `GET ${healthUrl}: status healthy`,
    probe: async () => (await loaderHealth(ctx.config, 2000, index), true),
    // /health answers at all: a loader that is degraded (its sink down) holds its rows, and a restart would not help
    alive: async () => (await fetch(healthUrl, { signal: AbortSignal.timeout(3000) }), true),
    hint: `read ${loaderPaths(ctx, index).log}; a port clash or an unreachable Postgres, Kafka or ClickHouse is named there. make check-services shows the stand.`,
    env: { STAND_INSTANCE: String(index) },
  };
}

export function loaderPid(ctx: StandContext, options: LoaderOptions = {}): number | undefined {
  return nodeServicePid(ctx, loaderSpec(ctx, options));
}

/** Starts the loader when it is not running, restarts it when its code changed, and waits for its health. */
export function ensureLoader(ctx: StandContext, options: LoaderOptions = {}): Promise<EnsureOutcome> {
  return ensureNodeService(ctx, loaderSpec(ctx, options));
}

/** Every loader of the group, in turn; one left over from a larger group is stopped (it would go on consuming). */
export async function ensureLoaders(ctx: StandContext, options: Omit<LoaderOptions, "instance"> = {}): Promise<EnsureOutcome[]> {
  for (const instance of leftoverInstances(ctx, "loader")) {
    ctx.print(`loader-${instance}: loader.instances is ${loaderInstances(ctx).length} now; stopping it`);
    await stopLoader(ctx, { ...options, instance });
  }
  const outcomes: EnsureOutcome[] = [];
  for (const instance of loaderInstances(ctx)) outcomes.push(await ensureLoader(ctx, { ...options, instance }));
  return outcomes;
}

/** Stops our loader: SIGTERM (it flushes and commits), up to 30 s, then SIGKILL. */
export function stopLoader(ctx: StandContext, options: LoaderOptions = {}): Promise<StopOutcome> {
  return stopNodeService(ctx, loaderSpec(ctx, options));
}

/** Stops every loader of the group (each flushes and commits), the last first, leftovers of a larger group included. */
export async function stopLoaders(ctx: StandContext, options: Omit<LoaderOptions, "instance"> = {}): Promise<void> {
  for (const instance of [...loaderInstances(ctx), ...leftoverInstances(ctx, "loader")].reverse()) await stopLoader(ctx, { ...options, instance });
}

/** One line of `stand status`: pid, port and the state its /health reports. */
export function loaderStatus(ctx: StandContext, options: LoaderOptions = {}): Promise<ServiceStatus> {
  const { name, port, index } = poolInstance(ctx.config, "loader", options.instance ?? 1);
  return probedStatus(name, port, loaderPid(ctx, options), async () => {
    const health = await loaderHealth(ctx.config, 2000, index);
    if (health.problems.length === 0) return { healthy: true, note: `state ${health.state}` };
    return { healthy: false, note: `state ${health.state}, DEGRADED: ${health.problems.join("; ")}` };
  });
}

/** One line of `stand status` per loader of the group. */
export function loaderStatuses(ctx: StandContext, options: Omit<LoaderOptions, "instance"> = {}): Promise<ServiceStatus>[] {
  return loaderInstances(ctx).map((instance) => loaderStatus(ctx, { ...options, instance }));
}
