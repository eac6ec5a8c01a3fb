// The Kafka → ClickHouse loader (src/loader/main.ts) as a stand service: a detached process with its
// pid file and log under <state_dir>/loader/, started by `stand up` once Kafka and ClickHouse are
// healthy and stopped by `stand down` before them. It runs always; whether it consumes is decided by
// the world DAGs through a control row in Postgres, and its /health says which (`state`).
// Only a process whose command line carries the entry path is ever signalled (src/stand/node-service.ts).
import path from "node:path";
import { repoRoot, type StandConfig } from "../config/stand.ts";
import {
  ensureNodeService,
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
}

export interface LoaderHealth {
  /** The loader's own word for what it does: stopped, consuming, … */
  state: string;
  /** Why it is degraded (its sink down, rows held): empty when healthy. */
  problems: string[];
}

export function loaderPaths(ctx: StandContext): NodeServicePaths {
  return nodeServicePaths(ctx, LOADER_SERVICE);
}

export function loaderHealthUrl(config: StandConfig): string {
  return `http://${config.bind_host}:${config.loader.port}/health`;
}

/** GET /health: its state when it answers 200 with status healthy; otherwise throws with the reason it gave. */
export async function loaderHealth(config: StandConfig, timeoutMs = 2000): Promise<LoaderHealth> {
  const response = await fetch(loaderHealthUrl(config), { signal: AbortSignal.timeout(timeoutMs) });
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
  return {
    name: LOADER_SERVICE,
    entry: options.entry ?? LOADER_ENTRY,
    port: ctx.config.loader.port,
    stopGraceMs: STOP_GRACE_MS,
    fingerprint: FINGERPRINT,
    healthWhat: `GET ${loaderHealthUrl(ctx.config)}: status healthy`,
    probe: async () => (await loaderHealth(ctx.config), true),
    // /health answers at all: a loader that is degraded (its sink down) holds its rows, and a restart would not help
    alive: async () => (await fetch(loaderHealthUrl(ctx.config), { signal: AbortSignal.timeout(3000) }), true),
    hint: `read ${loaderPaths(ctx).log}; a port clash or an unreachable Postgres, Kafka or ClickHouse is named there. make check-services shows the stand.`,
  };
}

export function loaderPid(ctx: StandContext, options: LoaderOptions = {}): number | undefined {
  return nodeServicePid(ctx, loaderSpec(ctx, options));
}

/** Starts the loader when it is not running, restarts it when its code changed, and waits for its health. */
export function ensureLoader(ctx: StandContext, options: LoaderOptions = {}): Promise<EnsureOutcome> {
  return ensureNodeService(ctx, loaderSpec(ctx, options));
}

/** Stops our loader: SIGTERM (it flushes and commits), up to 30 s, then SIGKILL. */
export function stopLoader(ctx: StandContext, options: LoaderOptions = {}): Promise<StopOutcome> {
  return stopNodeService(ctx, loaderSpec(ctx, options));
}

/** One line of `stand status`: pid, port and the state its /health reports. */
export function loaderStatus(ctx: StandContext, options: LoaderOptions = {}): Promise<ServiceStatus> {
  return probedStatus(LOADER_SERVICE, ctx.config.loader.port, loaderPid(ctx, options), async () => {
    const health = await loaderHealth(ctx.config);
    if (health.problems.length === 0) return { healthy: true, note: `state ${health.state}` };
    return { healthy: false, note: `state ${health.state}, DEGRADED: ${health.problems.join("; ")}` };
  });
}
