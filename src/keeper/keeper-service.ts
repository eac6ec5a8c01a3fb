// The keeper (src/stand/keeper-main.ts) as a stand service: a detached process with its pid file,
// log and state file under <state_dir>/keeper/, started by `stand up` last (when keeper.autostart)
// and stopped by `stand down` first. Its state file is what check-services, doctor and the world
// waits read; a state file whose keeper is not running is reported as such, never as current.
// The runner watches it in turn (watchKeeper): a keeper that died while wanted up is started again.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { repoRoot, type StandConfig } from "../config/index.ts";
import { errorMessage } from "../errors.ts";
import {
  ensureNodeService,
  launchNodeService,
  nodeServicePaths,
  nodeServicePid,
  nodeServiceSupervisor,
  stopNodeService,
  type EnsureOutcome,
  type NodeServiceSpec,
  type StopOutcome, type StandContext
} from "../services/index.ts";
import type { ServiceRecord } from "./policy.ts";

export const KEEPER_SERVICE = "keeper";
export const KEEPER_ENTRY = path.join(repoRoot, "src", "stand", "keeper-main.ts");
/** A state file not rewritten for this long is stale (the keeper ticks every second). */
export const KEEPER_STALE_MS = 15_000;

export function keeperHealthUrl(config: StandConfig): string | undefined {
  return config.keeper ? `http://${config.bind_host}:${config.keeper.port}/health` : undefined;
}

export function keeperSpec(ctx: StandContext): NodeServiceSpec {
  const keeper = ctx.config.keeper;
  if (!keeper) throw new Error("the stand config has no keeper section: nothing restarts its services (docs/stand.md \"Self-healing\")");
  const url = `http://${ctx.config.bind_host}:${keeper.port}/health`;
  return {
    name: KEEPER_SERVICE,
    entry: KEEPER_ENTRY,
    port: keeper.port,
    stopGraceMs: 10_000,
    fingerprint: { dirs: ["src"], files: ["package-lock.json"] },
    healthWhat: `GET ${url}: status healthy`,
    probe: async () => (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok,
    hint: `read ${nodeServicePaths(ctx, KEEPER_SERVICE).log}; make check-services shows the stand.`,
  };
}

export function keeperPid(ctx: StandContext): number | undefined {
  return ctx.config.keeper ? nodeServicePid(ctx, keeperSpec(ctx)) : undefined;
}

export function ensureKeeper(ctx: StandContext): Promise<EnsureOutcome> {
  return ensureNodeService(ctx, keeperSpec(ctx));
}

/** Stops the keeper first on the way down, so that nothing it watches is restarted behind `stand down`. */
export async function stopKeeper(ctx: StandContext): Promise<StopOutcome | undefined> {
  if (!ctx.config.keeper) return undefined;
  return stopNodeService(ctx, keeperSpec(ctx));
}

const lastExitSchema = z.object({
  at: z.string(),
  how: z.string(),
  code: z.number().nullable(),
  signal: z.string().nullable(),
  livedSeconds: z.number().nullable(),
  logTail: z.array(z.string()),
});

const recordSchema = z.object({
  service: z.string(),
  state: z.enum(["up", "starting", "not-serving", "restarting", "waiting", "crash-looping", "stopped"]),
  pid: z.number().nullable(),
  restarts: z.number().int().min(0),
  quickDeaths: z.number().int().min(0),
  lastExit: lastExitSchema.nullable(),
  nextStartAt: z.string().nullable(),
  message: z.string(),
  since: z.string(),
  crashLoopWantAt: z.string().nullable(),
}) satisfies z.ZodType<ServiceRecord>;

const stateFileSchema = z.object({
  keeper: z.object({ pid: z.number(), startedAt: z.string(), tickAt: z.string() }),
  services: z.array(recordSchema),
});

export type KeeperStateFile = z.infer<typeof stateFileSchema>;

export function keeperStatePath(ctx: StandContext): string {
  return path.join(nodeServicePaths(ctx, KEEPER_SERVICE).dir, "state.json");
}

export function writeKeeperState(ctx: StandContext, state: KeeperStateFile): void {
  const file = keeperStatePath(ctx);
  writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 1) + "\n");
  renameSync(`${file}.tmp`, file); // a reader never sees half a file
}

/** The state file as written, or undefined when absent or not ours (a reader never trusts it blindly). */
export function readKeeperStateFile(ctx: StandContext): KeeperStateFile | undefined {
  const file = keeperStatePath(ctx);
  if (!existsSync(file)) return undefined;
  try {
    const parsed = stateFileSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // no state file yet, or a torn one from a killed keeper: as if none (the keeper rewrites it)
    return undefined;
  }
}

export interface KeeperView {
  configured: boolean;
  /** The keeper's live pid of ours. */
  pid: number | undefined;
  /** Running and its state file rewritten within KEEPER_STALE_MS: the records are current. */
  current: boolean;
  /** The records, current or last known (see `current`). */
  services: ServiceRecord[];
  /** One line: whether restarts are being done, and since when the records are. */
  note: string;
}

/** Whether the records in `file` are current at `nowMs`: written by the keeper `pid` that runs, at most
 * KEEPER_STALE_MS ago (a keeper that stops writing is stuck, even while its process lives). */
export function keeperCurrency(pid: number | undefined, file: KeeperStateFile | undefined, nowMs: number): { ageMs: number; current: boolean } {
  const ageMs = file ? nowMs - Date.parse(file.keeper.tickAt) : Infinity;
  return { ageMs, current: pid !== undefined && file !== undefined && file.keeper.pid === pid && ageMs <= KEEPER_STALE_MS };
}

/** What the keeper knows, and whether it is current: a dead keeper's file is its last word, said so. */
export function readKeeperView(ctx: StandContext): KeeperView {
  if (!ctx.config.keeper) return { configured: false, pid: undefined, current: false, services: [], note: "no keeper in this stand config: nothing restarts a dead service" };
  const pid = keeperPid(ctx);
  const file = readKeeperStateFile(ctx);
  const { ageMs, current } = keeperCurrency(pid, file, Date.now());
  const services = file?.services ?? [];
  let note: string;
  if (current) note = `keeper pid ${pid} restarts what dies (last look ${(ageMs / 1000).toFixed(0)} s ago)`;
  else if (pid === undefined) {
    const want = nodeServiceSupervisor(ctx, KEEPER_SERVICE).readWant(KEEPER_SERVICE);
    note =
      `keeper NOT running${want?.want === "down" ? " (stopped on purpose)" : ""}: nothing restarts a dead service` +
      (file ? `; its last records are from ${file.keeper.tickAt}` : "") +
      "; make up starts it";
  } else note = `keeper pid ${pid} has not written its state for ${(ageMs / 1000).toFixed(0)} s: it may be stuck (its log: ${nodeServicePaths(ctx, KEEPER_SERVICE).log})`;
  return { configured: true, pid, current, services, note };
}

/**
 * The runner's half of the mutual watch: every `everyMs`, a keeper that is wanted up but not
 * running is started again (under its start lock, so two watchers start one). Returns a stop.
 */
export function watchKeeper(ctx: StandContext, log: (line: string) => void, everyMs = 5000): () => void {
  if (!ctx.config.keeper) return () => undefined;
  const spec = keeperSpec(ctx);
  const supervisor = nodeServiceSupervisor(ctx, KEEPER_SERVICE);
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void supervisor
      .withStartLock(KEEPER_SERVICE, async () => {
        if (supervisor.readWant(KEEPER_SERVICE)?.want !== "up" || nodeServicePid(ctx, spec) !== undefined) return;
        log(`the keeper is wanted up but not running; starting it again`);
        await launchNodeService(ctx, spec);
      })
      .catch((err: unknown) => log(`could not start the keeper again: ${errorMessage(err)}`))
      .finally(() => {
        busy = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
