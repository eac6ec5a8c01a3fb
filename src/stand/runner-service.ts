// The DAG runner (src/server/main.ts: engine + REST API + web view) as a stand service: a detached
// process with its pid file and log under .stand/runner/, started by `make up` after the stand and
// stopped by `make down` before it. The supervisor's pid-file rules apply: only a process whose
// command line carries our src/server/main.ts path is ever signalled (src/stand/node-service.ts).
//
// The runner loads dags/ once at start, so `ensureRunner` restarts it when the code it was started
// from (src, dags, tasks, sql, the passport, the lockfile, the stand config) has changed since.
import path from "node:path";
import { apiBaseUrl, loadStandConfig, repoRoot, type StandConfig } from "../config/stand.ts";
import {
  codeFingerprint as fingerprintOf,
  ensureNodeService,
  nodeServicePaths,
  nodeServicePid,
  stopNodeService,
  type EnsureOutcome,
  type NodeServicePaths,
  type NodeServiceSpec,
} from "./node-service.ts";
import type { StandContext } from "./service.ts";

export const RUNNER_SERVICE = "runner";
const SERVER_ENTRY = path.join(repoRoot, "src", "server", "main.ts");
/** Long enough for running tries to finish or hand back (the server's own grace is 10 s + 5 s). */
const STOP_GRACE_MS = 30_000;
const FINGERPRINT = { dirs: ["src", "dags", "tasks", "sql"], files: ["package-lock.json", "data/world-inventory.json"] };

export type RunnerPaths = NodeServicePaths;

export function runnerPaths(ctx: StandContext): RunnerPaths {
  return nodeServicePaths(ctx, RUNNER_SERVICE);
}

/** sha256 over the paths and contents of everything the runner process loads or reads at load time. */
export function codeFingerprint(): string {
  return fingerprintOf(FINGERPRINT);
}

interface HealthBody {
  metadatabase?: { status?: string; detail?: string };
  scheduler?: { status?: string };
}

/** True when the API answers and both the metadatabase and the scheduler report healthy. */
export async function runnerHealthy(timeoutMs = 2000, config: StandConfig = loadStandConfig()): Promise<boolean> {
  const response = await fetch(`${apiBaseUrl(config)}/api/v2/monitor/health`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`health answered ${response.status}`);
  const body = (await response.json()) as HealthBody;
  if (body.metadatabase?.status !== "healthy") throw new Error(`metadatabase ${body.metadatabase?.status ?? "?"}${body.metadatabase?.detail === undefined ? "" : `: ${body.metadatabase.detail}`}`);
  if (body.scheduler?.status !== "healthy") throw new Error(`scheduler ${body.scheduler?.status ?? "?"}`);
  return true;
}

export function runnerSpec(ctx: StandContext): NodeServiceSpec {
  return {
    name: RUNNER_SERVICE,
    entry: SERVER_ENTRY,
    port: ctx.config.runner.api_port,
    stopGraceMs: STOP_GRACE_MS,
    fingerprint: FINGERPRINT,
    healthWhat: `GET ${apiBaseUrl(ctx.config)}/api/v2/monitor/health: metadatabase and scheduler healthy`,
    probe: () => runnerHealthy(2000, ctx.config),
    // the API answers (its health may name a Postgres it cannot reach: restarting it would not help)
    alive: async () => (await fetch(`${apiBaseUrl(ctx.config)}/api/v2/monitor/health`, { signal: AbortSignal.timeout(3000) })).ok,
    hint: `read ${runnerPaths(ctx).log}; a port clash or an unreachable Postgres is named there. make check-services shows the stand.`,
  };
}

export function runnerPid(ctx: StandContext): number | undefined {
  return nodeServicePid(ctx, runnerSpec(ctx));
}

/**
 * Makes sure our runner is running the current code and healthy: starts it when it is not running,
 * restarts it when the code changed since it started, and waits for its health either way.
 * Returns what it did.
 */
export function ensureRunner(ctx: StandContext): Promise<EnsureOutcome> {
  return ensureNodeService(ctx, runnerSpec(ctx));
}

/** Stops our runner (SIGTERM: open waits answered, running tries finish or are handed back). */
export async function stopRunner(ctx: StandContext): Promise<void> {
  await stopNodeService(ctx, runnerSpec(ctx));
}
