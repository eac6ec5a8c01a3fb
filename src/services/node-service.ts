// Our own Node processes as stand services (the runner, the loader, the keeper): `node
// scripts/launch.mjs <entry>` (the runner: `node --import tsx <entry>`, its DAG folder is TypeScript),
// detached, with pid file, log and code fingerprint under <state_dir>/<name>/. The entry path is the
// pid file's marker, so only a process whose command line carries it is ever signalled.
//
// Such a process loads its code once at start, so one left over from older code would run old code:
// `ensureNodeService` restarts it when the files it was started from have changed since.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { instancesOf, launchArgs, repoRoot, standConfigPath, type PoolKind } from "../config/index.ts";
import { waitForHealthy } from "./health.ts";
import { PortTakenError, type LaunchOptions, type StandContext } from "./service.ts";
import { withStartFailPoint } from "./fail-points.ts";
import { Supervisor, type StartSpec, type StopOptions } from "./supervisor.ts";

/** What the code fingerprint covers, relative to the repository; the stand config in force is always added. */
export interface FingerprintInputs {
  dirs: string[];
  files: string[];
}

export interface NodeServiceSpec {
  /** Name of its state directory, pid file and log (<name>.log), and of the service in messages. */
  name: string;
  /** Absolute path of the .ts entry point; also the pid file's marker. */
  entry: string;
  /** "tsx" for a program that import()s TypeScript at run time (the runner and its DAG folder);
   * otherwise it runs from its bundle (scripts/launch.mjs: a third of tsx's start-up CPU). */
  loader?: "tsx";
  port: number;
  /** How long SIGTERM may take before SIGKILL. */
  stopGraceMs: number;
  fingerprint: FingerprintInputs;
  /** What the health probe checks, in words. */
  healthWhat: string;
  /** True when healthy; may throw with the reason it is not. */
  probe(): Promise<boolean>;
  /** True while it answers at all, even when what it depends on is down (the keeper restarts a
   * process only when this fails). The health probe when absent. */
  alive?(): Promise<boolean>;
  /** What to try when it does not come up. */
  hint: string;
  /** Environment added to the stand's for this process (STAND_INSTANCE for instance k > 1 of a pool). */
  env?: Record<string, string>;
}

export interface NodeServicePaths {
  dir: string;
  log: string;
  fingerprint: string;
}

export type EnsureOutcome = "running" | "started" | "restarted";
export type StopOutcome = Awaited<ReturnType<Supervisor["stop"]>>;

/** The supervisor of a node service: its pid and want files live in its own state directory. */
export function nodeServiceSupervisor(ctx: StandContext, name: string): Supervisor {
  return new Supervisor(nodeServicePaths(ctx, name).dir);
}

export function nodeServicePaths(ctx: StandContext, name: string): NodeServicePaths {
  const dir = path.join(ctx.paths.root, name);
  return { dir, log: path.join(dir, `${name}.log`), fingerprint: path.join(dir, "code.sha256") };
}

/**
 * Instances of a pool that ran here (a state directory runner-k / loader-k with a pid file) beyond
 * what the config has now: a pool made smaller while it ran. Stopping the stand stops them too.
 */
export function leftoverInstances(ctx: StandContext, kind: PoolKind): number[] {
  const count = instancesOf(ctx.config, kind).length;
  if (!existsSync(ctx.paths.root)) return [];
  const pattern = new RegExp(`^${kind}-(\\d+)$`);
  return readdirSync(ctx.paths.root)
    .map((entry) => Number(pattern.exec(entry)?.[1] ?? Number.NaN))
    .filter((index) => index > count && nodeServiceSupervisor(ctx, `${kind}-${index}`).readPid(`${kind}-${index}`) !== undefined)
    .sort((a, b) => a - b);
}

function supervisorOf(ctx: StandContext, spec: NodeServiceSpec): Supervisor {
  return nodeServiceSupervisor(ctx, spec.name);
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** sha256 over the paths and contents of the given files and directories and the stand config in force. */
export function codeFingerprint(inputs: FingerprintInputs, configFile: string = standConfigPath()): string {
  const files = [...inputs.dirs.flatMap((d) => listFiles(path.join(repoRoot, d))), ...inputs.files.map((f) => path.join(repoRoot, f)), configFile].sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(path.relative(repoRoot, file)).update("\0");
    if (existsSync(file)) hash.update(readFileSync(file));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/** The live pid of our process for this service, or undefined (a stale pid file is removed). */
export function nodeServicePid(ctx: StandContext, spec: NodeServiceSpec): number | undefined {
  return supervisorOf(ctx, spec).runningPid(spec.name);
}

/** Launches the process; the caller holds its start lock and knows it is not running. */
export async function launchNodeService(ctx: StandContext, spec: NodeServiceSpec, options: LaunchOptions = {}): Promise<number> {
  if (!(await supervisorOf(ctx, spec).settle(spec.name, spec.port))) throw new PortTakenError(spec.name, spec.port);
  const paths = nodeServicePaths(ctx, spec.name);
  mkdirSync(paths.dir, { recursive: true });
  const fingerprint = codeFingerprint(spec.fingerprint, ctx.configFile);
  const start: StartSpec = {
    service: spec.name,
    command: process.execPath,
    args: spec.loader === "tsx" ? ["--import", "tsx", spec.entry] : launchArgs(spec.entry),
    logFile: paths.log,
    marker: spec.entry,
    cwd: repoRoot,
    // a context read from another stand file hands it on (a second host's runner on this machine);
    // an instance of a pool is told which it is
    env:
      ctx.configFile === undefined && spec.env === undefined
        ? undefined
        : // eslint-disable-next-line no-restricted-properties -- the child inherits this environment
          { ...process.env, ...(ctx.configFile === undefined ? {} : { STAND_CONFIG: ctx.configFile }), ...spec.env },
  };
  const pid = supervisorOf(ctx, spec).start({ ...withStartFailPoint(ctx, start), onExit: options.onExit });
  writeFileSync(paths.fingerprint, `${fingerprint}\n`);
  ctx.print(`${spec.name}: started pid ${pid}, log ${path.relative(repoRoot, paths.log)}`);
  return pid;
}

async function waitForService(ctx: StandContext, spec: NodeServiceSpec): Promise<void> {
  await waitForHealthy({
    service: spec.name,
    port: spec.port,
    what: spec.healthWhat,
    probe: () => spec.probe(),
    isAlive: () => nodeServicePid(ctx, spec) !== undefined,
    timeoutSeconds: ctx.config.health_timeout_seconds,
    logFiles: [nodeServicePaths(ctx, spec.name).log],
    hint: spec.hint,
    print: ctx.print,
  });
}

function startedFrom(ctx: StandContext, spec: NodeServiceSpec): string | undefined {
  const file = nodeServicePaths(ctx, spec.name).fingerprint;
  return existsSync(file) ? readFileSync(file, "utf8").trim() : undefined;
}

/**
 * Makes sure our process is running the current code and healthy: starts it when it is not running,
 * restarts it when the code changed since it started, and waits for its health either way.
 */
export async function ensureNodeService(ctx: StandContext, spec: NodeServiceSpec): Promise<EnsureOutcome> {
  const outcome = await supervisorOf(ctx, spec).withStartLock(spec.name, async (): Promise<EnsureOutcome> => {
    const pid = nodeServicePid(ctx, spec);
    if (pid !== undefined && startedFrom(ctx, spec) === codeFingerprint(spec.fingerprint, ctx.configFile)) {
      ctx.print(`${spec.name}: already running (pid ${pid})`);
      supervisorOf(ctx, spec).setWant(spec.name, "up"); // asked for: from now on the keeper keeps it
      return "running";
    }
    if (pid !== undefined) {
      ctx.print(`${spec.name}: the code changed since pid ${pid} started; restarting it`);
      await stopNodeService(ctx, spec, { keepWanted: true });
    }
    await launchNodeService(ctx, spec);
    return pid === undefined ? "started" : "restarted";
  });
  await waitForService(ctx, spec);
  return outcome;
}

/** Stops our process: SIGTERM, up to the grace, then SIGKILL. A pid file naming another process is only removed. */
export async function stopNodeService(ctx: StandContext, spec: NodeServiceSpec, options: StopOptions = {}): Promise<StopOutcome> {
  const outcome = await supervisorOf(ctx, spec).stop(spec.name, "SIGTERM", spec.stopGraceMs, options);
  ctx.print(`${spec.name}: ${outcome === "killed" ? `killed (did not stop within ${spec.stopGraceMs / 1000} s)` : outcome}`);
  return outcome;
}
