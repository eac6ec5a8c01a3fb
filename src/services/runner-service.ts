// The DAG runner (src/server/main.ts: engine + REST API + web view) as a stand service: a detached
// process with its pid file and log under .stand/runner/, started by `make up` after the stand and
// stopped by `make down` before it. The supervisor's pid-file rules apply: only a process whose
// command line carries our src/server/main.ts path is ever signalled (src/services/node-service.ts).
//
// The runner loads dags/ once at start, so `ensureRunner` restarts it when the code it was started
// from (src, dags, tasks, sql, the passport, the lockfile, the stand config) has changed since.
//
// runner.instances > 1: a pool of runners on one metadata database (docs/deploy.md). Instance k is
// the service runner-k (its own state directory, pid file and log), listens on runner.api_port + k - 1
// and is told which it is by STAND_INSTANCE=k; the first keeps the name `runner`.
import path from "node:path";
import { apiBaseUrl, instancesOf, loadStandConfig, poolInstance, repoRoot, type StandConfig } from "../config/index.ts";
import {
  codeFingerprint as fingerprintOf,
  ensureNodeService,
  leftoverInstances,
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
const FINGERPRINT = { dirs: ["src", "dags", "tasks", "sql"], files: ["package-lock.json", "data/world-inventory.json", "data/world-inventory.small.json"] };

export type RunnerPaths = NodeServicePaths;

export function runnerPaths(ctx: StandContext, instance = 1): RunnerPaths {
  return nodeServicePaths(ctx, poolInstance(ctx.config, "runner", instance).name);
}

/** sha256 over the paths and contents of everything the runner process loads or reads at load time. */
export function codeFingerprint(): string {
  return fingerprintOf(FINGERPRINT);
}

interface HealthBody {
  metadatabase?: { status?: string; detail?: string };
  scheduler?: { status?: string };
}

/** True when the API (of instance `instance`) answers and both the metadatabase and the scheduler report healthy. */
export async function runnerHealthy(timeoutMs = 2000, config: StandConfig = loadStandConfig(), instance = 1): Promise<boolean> {
  const response = await fetch(`${apiBaseUrl(config, instance)}/api/v2/monitor/health`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`health answered ${response.status}`);
  const body = (await response.json()) as HealthBody;
  if (body.metadatabase?.status !== "healthy") throw new Error(`metadatabase ${body.metadatabase?.status ?? "?"}${body.metadatabase?.detail === undefined ? "" : `: ${body.metadatabase.detail}`}`);
  if (body.scheduler?.status !== "healthy") throw new Error(`scheduler ${body.scheduler?.status ?? "?"}`);
  return true;
}

export function runnerSpec(ctx: StandContext, instance = 1): NodeServiceSpec {
  const { name, port, index } = poolInstance(ctx.config, "runner", instance);
  const base = apiBaseUrl(ctx.config, index);
  return {
    name,
    entry: SERVER_ENTRY,
    loader: "tsx", // it import()s the DAG folder (src/dag-processor)
    port,
    stopGraceMs: STOP_GRACE_MS,
    fingerprint: FINGERPRINT,
    healthWhat: `GET ${base}/api/v2/monitor/health: metadatabase and scheduler healthy`,
    probe: () => runnerHealthy(2000, ctx.config, index),
    // the API answers (its health may name a Postgres it cannot reach: restarting it would not help)
    alive: async () => (await fetch(`${base}/api/v2/monitor/health`, { signal: AbortSignal.timeout(3000) })).ok,
    hint: `read ${runnerPaths(ctx, index).log}; a port clash or an unreachable Postgres is named there. make check-services shows the stand.`,
    env: { STAND_INSTANCE: String(index) },
  };
}

/** Every runner instance of the stand config (runner.instances), the first first. */
export function runnerInstances(ctx: StandContext): number[] {
  return instancesOf(ctx.config, "runner").map((i) => i.index);
}

export function runnerPid(ctx: StandContext, instance = 1): number | undefined {
  return nodeServicePid(ctx, runnerSpec(ctx, instance));
}

/**
 * Makes sure our runner (instance `instance`) is running the current code and healthy: starts it
 * when it is not running, restarts it when the code changed since it started, and waits for its
 * health either way. Returns what it did.
 */
export function ensureRunner(ctx: StandContext, instance = 1): Promise<EnsureOutcome> {
  return ensureNodeService(ctx, runnerSpec(ctx, instance));
}

/** Every runner of the pool, in turn (each migrates the same database: one at a time is quicker than a race for its lock). */
export async function ensureRunners(ctx: StandContext): Promise<EnsureOutcome[]> {
  const outcomes: EnsureOutcome[] = [];
  for (const instance of runnerInstances(ctx)) outcomes.push(await ensureRunner(ctx, instance));
  return outcomes;
}

/** Stops our runner (SIGTERM: open waits answered, running tries finish or are handed back). */
export async function stopRunner(ctx: StandContext, instance = 1): Promise<void> {
  await stopNodeService(ctx, runnerSpec(ctx, instance));
}

/** Stops every runner of the pool, the last first, instances since removed from the config included (their state directories say which ran). */
export async function stopRunners(ctx: StandContext): Promise<void> {
  for (const instance of [...runnerInstances(ctx), ...leftoverInstances(ctx, "runner")].reverse()) await stopRunner(ctx, instance);
}
