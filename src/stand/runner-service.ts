// The DAG runner (src/server/main.ts: engine + REST API + web view) as a stand service: a detached
// process with its pid file and log under .stand/runner/, started by `make up` after the stand and
// stopped by `make down` before it. The supervisor's pid-file rules apply: only a process whose
// command line carries our src/server/main.ts path is ever signalled.
//
// The runner loads dags/ once at start, so a runner left over from older code would run old DAGs:
// `ensureRunner` restarts it when the code it was started from (src, dags, tasks, sql, the
// passport, the lockfile, the stand config) has changed since.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { apiBaseUrl, repoRoot, standConfigPath } from "../config/stand.ts";
import { waitForHealthy } from "./health.ts";
import { PortTakenError, type StandContext } from "./service.ts";
import { isPortOpen, Supervisor } from "./supervisor.ts";

export const RUNNER_SERVICE = "runner";
const SERVER_ENTRY = path.join(repoRoot, "src", "server", "main.ts");
/** Long enough for running tries to finish or hand back (the server's own grace is 10 s + 5 s). */
const STOP_GRACE_MS = 30_000;
const FINGERPRINT_DIRS = ["src", "dags", "tasks", "sql"];
const FINGERPRINT_FILES = ["package-lock.json", "data/world-inventory.json"];

export interface RunnerPaths {
  dir: string;
  log: string;
  fingerprint: string;
}

export function runnerPaths(ctx: StandContext): RunnerPaths {
  const dir = path.join(ctx.paths.root, "runner");
  return { dir, log: path.join(dir, "runner.log"), fingerprint: path.join(dir, "code.sha256") };
}

function runnerSupervisor(ctx: StandContext): Supervisor {
  return new Supervisor(runnerPaths(ctx).dir);
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** sha256 over the paths and contents of everything the runner process loads or reads at load time. */
export function codeFingerprint(): string {
  const files = [
    ...FINGERPRINT_DIRS.flatMap((d) => listFiles(path.join(repoRoot, d))),
    ...FINGERPRINT_FILES.map((f) => path.join(repoRoot, f)),
    standConfigPath(),
  ].sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(path.relative(repoRoot, file)).update("\0");
    if (existsSync(file)) hash.update(readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

interface HealthBody {
  metadatabase?: { status?: string };
  scheduler?: { status?: string };
}

/** True when the API answers and both the metadatabase and the scheduler report healthy. */
export async function runnerHealthy(timeoutMs = 2000): Promise<boolean> {
  const response = await fetch(`${apiBaseUrl()}/api/v2/monitor/health`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`health answered ${response.status}`);
  const body = (await response.json()) as HealthBody;
  if (body.metadatabase?.status !== "healthy") throw new Error(`metadatabase ${body.metadatabase?.status ?? "?"}`);
  if (body.scheduler?.status !== "healthy") throw new Error(`scheduler ${body.scheduler?.status ?? "?"}`);
  return true;
}

export function runnerPid(ctx: StandContext): number | undefined {
  return runnerSupervisor(ctx).runningPid(RUNNER_SERVICE);
}

async function launchRunner(ctx: StandContext): Promise<number> {
  const port = ctx.config.runner.api_port;
  if (await isPortOpen(port)) throw new PortTakenError(RUNNER_SERVICE, port);
  const paths = runnerPaths(ctx);
  mkdirSync(paths.dir, { recursive: true });
  const fingerprint = codeFingerprint();
  const pid = runnerSupervisor(ctx).start({
    service: RUNNER_SERVICE,
    command: process.execPath,
    args: ["--import", "tsx", SERVER_ENTRY],
    logFile: paths.log,
    marker: SERVER_ENTRY,
    cwd: repoRoot,
  });
  writeFileSync(paths.fingerprint, `${fingerprint}\n`);
  ctx.print(`runner: started pid ${pid}, log ${path.relative(repoRoot, paths.log)}`);
  return pid;
}

async function waitForRunner(ctx: StandContext): Promise<void> {
  const paths = runnerPaths(ctx);
  await waitForHealthy({
    service: RUNNER_SERVICE,
    port: ctx.config.runner.api_port,
    what: `GET ${apiBaseUrl()}/api/v2/monitor/health: metadatabase and scheduler healthy`,
    probe: () => runnerHealthy(),
    isAlive: () => runnerPid(ctx) !== undefined,
    timeoutSeconds: ctx.config.health_timeout_seconds,
    logFiles: [paths.log],
    hint: `read ${paths.log}; a port clash or an unreachable Postgres is named there. make check-services shows the stand.`,
    print: ctx.print,
  });
}

function startedFrom(ctx: StandContext): string | undefined {
  const file = runnerPaths(ctx).fingerprint;
  return existsSync(file) ? readFileSync(file, "utf8").trim() : undefined;
}

/**
 * Makes sure our runner is running the current code and healthy: starts it when it is not running,
 * restarts it when the code changed since it started, and waits for its health either way.
 * Returns what it did.
 */
export async function ensureRunner(ctx: StandContext): Promise<"running" | "started" | "restarted"> {
  const pid = runnerPid(ctx);
  if (pid !== undefined && startedFrom(ctx) === codeFingerprint()) {
    ctx.print(`runner: already running (pid ${pid})`);
    await waitForRunner(ctx);
    return "running";
  }
  if (pid !== undefined) {
    ctx.print(`runner: the code changed since pid ${pid} started; restarting it`);
    await stopRunner(ctx);
  }
  await launchRunner(ctx);
  await waitForRunner(ctx);
  return pid === undefined ? "started" : "restarted";
}

/** Stops our runner (SIGTERM: open waits answered, running tries finish or are handed back). */
export async function stopRunner(ctx: StandContext): Promise<void> {
  const outcome = await runnerSupervisor(ctx).stop(RUNNER_SERVICE, "SIGTERM", STOP_GRACE_MS);
  ctx.print(`runner: ${outcome === "killed" ? `killed (did not stop within ${STOP_GRACE_MS / 1000} s)` : outcome}`);
}
