// World snapshots as the world DAGs do them (world_snapshot, world_restore; docs/world.md "Snapshots").
// A save quiesces ingestion (the loader drains, commits and leaves its groups), stops the services
// whose data is the world (ZooKeeper, both ClickHouse nodes, Kafka), copies their files
// (src/snapshots/store.ts) and starts them again, so Kafka's committed offsets and ClickHouse's
// rows agree exactly. A restore refuses before it touches anything (unknown, half-written or damaged
// snapshot, another schema or stand layout, no disk), then sets the position to -1, puts the files
// back, starts the services, records the schema build and the catalogue as this run's, resumes
// ingestion and sets the snapshot's position. A restore cut short leaves -1, and running it again
// (or make rebuild-storage) brings the world back. Postgres, the runner and the keeper stay up.
import { loadStandConfig, type StandConfig } from "../config/index.ts";
import { setIngest } from "../loader/index.ts";
import { listTree } from "./tree.ts";
import { layoutDifferences, mib, SnapshotRefusedError, SnapshotStore, snapshotParts, standLayout, type SnapshotManifest } from "./store.ts";
import { type StandContext, standPaths, Supervisor } from "../services/index.ts";
import { WorldTaskError, throwIfAborted, type TaskIo, recordWorldCatalogue, currentDdlFiles, readWorldBuild, recordAppliedDdl, withRunnerDb, type DdlFileChecksum } from "../world/index.ts";
import { errorMessage } from "../errors.ts";
import { NonRetryableError } from "../runner/index.ts";
import { existsSync } from "node:fs";
import path from "node:path";

export interface SnapshotTaskInput extends TaskIo {
  name: string;
  dagId: string;
  runId: string;
  taskId: string;
  config?: StandConfig;
  /** Stops and starts the services whose data is the world (the stand's: src/stand, WORLD_SERVICES). */
  worldServices: WorldServices;
}

/** How a save or restore quiesces the world's services and brings them back: given by the stand, which knows its services. */
export interface WorldServices {
  stop(ctx: StandContext): Promise<void>;
  start(ctx: StandContext): Promise<void>;
}

function storeOf(input: SnapshotTaskInput): { store: SnapshotStore; ctx: StandContext } {
  const config = input.config ?? loadStandConfig();
  const paths = standPaths(config);
  const ctx: StandContext = { config, paths, supervisor: new Supervisor(paths.pids), print: input.log };
  return { store: new SnapshotStore(ctx.config, ctx.paths), ctx };
}

/** A refusal of the store, as the task's error; anything else as it is. */
async function refusing<T>(step: string, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    // a refusal is final: retrying cannot change the snapshot, the schema or the disk
    if (err instanceof SnapshotRefusedError) throw new NonRetryableError(`${step}: refused, the world untouched: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * Snapshots copy the services' own files, so they need the local-process stand: a service of the
 * world that this stand neither runs nor keeps data for (the docker-compose stand's containers) is
 * a refusal, before anything stops.
 */
function assertLocalServices(ctx: StandContext, name: string): void {
  const foreign = snapshotParts(ctx.config, ctx.paths).filter((p) => ctx.supervisor.readPid(p.service) === undefined && !existsSync(p.live));
  if (foreign.length > 0) {
    throw new SnapshotRefusedError(
      name,
      `${foreign.map((p) => p.service).join(", ")} ${foreign.length === 1 ? "is" : "are"} not run by this stand (no pid file, no data under ${ctx.paths.root}): ` +
        "world snapshots copy the services' own files and work on the local-process stand only (the docker-compose stand has none: docs/world.md, Snapshots)",
    );
  }
}

/** The sql/ddl files whose checksums differ between a build and today's files, one phrase each. */
export function ddlDifferences(built: readonly DdlFileChecksum[], today: readonly DdlFileChecksum[]): string[] {
  const now = new Map(today.map((f) => [f.file, f.checksum]));
  const then = new Map(built.map((f) => [f.file, f.checksum]));
  const out: string[] = [];
  for (const [file, checksum] of then) {
    if (!now.has(file)) out.push(`${file} (gone from sql/ddl/)`);
    else if (now.get(file) !== checksum) out.push(`${file} (changed)`);
  }
  for (const file of now.keys()) if (!then.has(file)) out.push(`${file} (new in sql/ddl/)`);
  return out.sort();
}

// ---- world_snapshot ----

/** Refuses a save that could not be restored or would fill the disk; reads only. */
export async function checkSnapshotSave(input: SnapshotTaskInput & { position: number; startingDays: number }): Promise<void> {
  const step = "check_snapshot";
  const { store, ctx } = storeOf(input);
  await refusing(step, async () => {
    assertLocalServices(ctx, input.name);
    const existing = store.list().find((s) => s.name === input.name);
    if (existing?.state === "complete") throw new SnapshotRefusedError(input.name, `a snapshot named '${input.name}' exists (position ${existing.manifest?.position ?? "?"}); remove it first (make snapshot-rm NAME=${input.name}) or choose another name`);
    if (input.position < input.startingDays) {
      throw new SnapshotRefusedError(input.name, `world_position is ${input.position}: only a ready world (${input.startingDays} or more) is saved; run make up (or make rebuild-storage) first`);
    }
    const build = await withRunnerDb((db) => readWorldBuild(db), "world-snapshot");
    const drift = ddlDifferences(build, await currentDdlFiles());
    if (drift.length > 0) throw new SnapshotRefusedError(input.name, `the world was built with other DDL than sql/ddl/ today (${drift.join(", ")}); no restore could take it back. Rebuild it first (make rebuild-storage)`);
    const cost = store.measureLive();
    store.checkRoom(input.name, cost.copiedBytes, "the save");
    input.log(`snapshot '${input.name}' of position ${input.position}: ${cost.files} files, ${cost.linkedFiles} to link, ${mib(cost.copiedBytes)} to copy; ${mib(store.freeBytes())} free`);
  });
}

/** Quiesces the world, copies its services' files, and brings everything back, whatever happened. */
export async function saveSnapshot(input: SnapshotTaskInput & { position: number }): Promise<SnapshotManifest> {
  const step = "save_snapshot";
  const { store, ctx } = storeOf(input);
  const build = await withRunnerDb((db) => readWorldBuild(db), "world-snapshot");
  const requestedBy = `${input.dagId}/${input.runId}/${input.taskId}`;
  const started = Date.now();
  await store.emptyTrash();
  await setIngest({ ...input, desired: "stopped", requestedBy, timeoutMs: 120_000 });
  let manifest: SnapshotManifest | undefined;
  try {
    await input.worldServices.stop(ctx);
    const stopped = Date.now();
    throwIfAborted(input.signal, step);
    manifest = await store.save(
      input.name,
      {
        position: input.position,
        takenAt: new Date().toISOString(),
        takenBy: { dagId: input.dagId, runId: input.runId },
        layout: standLayout(ctx.config),
        ddl: build.map((b) => ({ file: b.file, checksum: b.checksum, statements: b.statements, serverVersion: b.serverVersion })),
      },
      input.signal,
    );
    for (const [part, copy] of Object.entries(manifest.parts)) {
      input.log(`saved ${part}: ${copy.files} files, ${copy.linkedFiles} linked, ${mib(copy.copiedBytes)} copied`);
    }
    input.log(`files copied in ${((Date.now() - stopped) / 1000).toFixed(1)} s (services stopped after ${((stopped - started) / 1000).toFixed(1)} s)`);
  } finally {
    await input.worldServices.start(ctx);
    await setIngest({ ...input, desired: "consuming", requestedBy, timeoutMs: 120_000 });
  }
  if (manifest === undefined) throw new Error(`${step}: the save of '${input.name}' ended without a manifest`);
  input.log(`snapshot '${input.name}' saved at position ${input.position} in ${((Date.now() - started) / 1000).toFixed(1)} s: ${store.folder(input.name)}`);
  return manifest;
}

// ---- world_restore ----

/** Every refusal, before anything is touched: the snapshot is complete and whole, of today's
 * schema and this stand's layout, and the disk has room for its copies. */
export async function checkSnapshotRestore(input: SnapshotTaskInput): Promise<SnapshotManifest> {
  const step = "check_snapshot";
  const { store, ctx } = storeOf(input);
  return refusing(step, async () => {
    const manifest = store.openForRestore(input.name);
    assertLocalServices(ctx, input.name);
    const drift = ddlDifferences(manifest.ddl, await currentDdlFiles());
    if (drift.length > 0) {
      throw new SnapshotRefusedError(input.name, `snapshot '${input.name}' holds a world of another schema: its DDL differs from sql/ddl/ today in ${drift.join(", ")}; restore it with the code it was taken with, or rebuild (make rebuild-storage) and take a new one`);
    }
    const layout = layoutDifferences(manifest.layout, standLayout(ctx.config));
    if (layout.length > 0) throw new SnapshotRefusedError(input.name, `snapshot '${input.name}' was taken on another stand layout: ${layout.join("; ")}; restore it on the stand it was taken on`);
    const copied = Object.values(manifest.parts).reduce((sum, p) => sum + p.copiedBytes, 0);
    store.checkRoom(input.name, copied, "the restore");
    input.log(`snapshot '${input.name}': position ${manifest.position}, taken ${manifest.takenAt} by ${manifest.takenBy.dagId}/${manifest.takenBy.runId}; schema and layout match; ${mib(copied)} to copy`);
    return manifest;
  });
}

/** Stops the world's services, puts the snapshot's files in place of theirs, starts them again. */
export async function replaceWorldFiles(input: SnapshotTaskInput): Promise<void> {
  const step = "replace_world";
  const { store, ctx } = storeOf(input);
  const manifest = await refusing(step, () => store.openForRestore(input.name));
  const requestedBy = `${input.dagId}/${input.runId}/${input.taskId}`;
  const started = Date.now();
  await store.emptyTrash();
  for (const part of snapshotParts(ctx.config, ctx.paths)) {
    const files = existsSync(part.live) ? listTree(part.live, part.filter).length : 0;
    const saved = manifest.parts[part.name];
    input.log(`replacing ${part.name}: ${files} live files (${path.relative(ctx.paths.root, part.live)}) by the snapshot's ${saved?.files ?? 0}`);
  }
  await setIngest({ ...input, desired: "stopped", requestedBy, timeoutMs: 120_000 });
  await input.worldServices.stop(ctx);
  const stopped = Date.now();
  try {
    const done = await store.restore(input.name, input.signal);
    input.log(`files in place in ${((Date.now() - stopped) / 1000).toFixed(1)} s: ${done.files} files, ${done.linkedFiles} linked, ${mib(done.copiedBytes)} copied`);
  } catch (err) {
    throw new WorldTaskError(step, `putting the files of '${input.name}' back failed: ${errorMessage(err)}. world_position stays -1; run world_restore again (make restore NAME=${input.name}) or make rebuild-storage`, { cause: err });
  }
  await input.worldServices.start(ctx);
  input.log(`services serving again ${((Date.now() - started) / 1000).toFixed(1)} s after the restore began`);
  // the replaced files go in the background (the next save or restore empties what is left)
  void store.emptyTrash().catch((err: unknown) => input.log(`could not remove the replaced files yet: ${errorMessage(err)}`));
}

/** The schema ledger and the catalogue recorded as this run's build: the world is the snapshot's. */
export async function recordRestoredSchema(input: SnapshotTaskInput, manifest: SnapshotManifest): Promise<void> {
  const serverVersions = new Set(manifest.ddl.map((d) => d.serverVersion));
  for (const d of manifest.ddl) {
    await recordAppliedDdl({ file: d.file, checksum: d.checksum, statements: d.statements, dagId: input.dagId, runId: input.runId, taskId: input.taskId, serverVersion: d.serverVersion });
  }
  input.log(`schema ledger: the snapshot's build of ${manifest.ddl.length} files recorded as this run's (server ${[...serverVersions].join(", ")})`);
  await recordWorldCatalogue({ ...input, runId: input.runId });
}

/** Resumes ingestion after a restore: the loader consumes from the group offsets the snapshot holds. */
export async function resumeIngest(input: SnapshotTaskInput): Promise<void> {
  await setIngest({ ...input, desired: "consuming", requestedBy: `${input.dagId}/${input.runId}/${input.taskId}`, timeoutMs: 120_000 });
}
