// World snapshots on disk (docs/world.md "Snapshots"): <state_dir>/snapshots/<name>/ holds, per world
// service, a copy of its data taken while it was stopped (ZooKeeper's whole data, each ClickHouse
// node's databases but `system`, Kafka's whole log directory), and manifest.json, written last. A save
// writes into <name>.partial/ and renames it when the manifest is in: a name with only a .partial
// directory is a save that did not finish, and nothing restores it. This module knows the files; the
// world DAGs' tasks (src/snapshots/world-snapshot.ts) decide when services stop and what the world's records say.
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createHash } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import type { StandConfig } from "../config/index.ts";
import { errorMessage } from "../errors.ts";
import type { StandPaths } from "../services/index.ts";
import { killPoint, stagedFreeBytes } from "./fail-points.ts";
import { addCopies, copyTree, emptyCopy, listTree, measureTree, type BulkDirs, type LinkRule, type TreeCopy, type TreeFilter } from "./tree.ts";

/** A snapshot's name: a file name of its own, never a path. */
export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const PARTIAL = ".partial";
const MANIFEST = "manifest.json";
export const SNAPSHOT_FORMAT = 1;

/** One service's data in a snapshot: where it lives, which of its files are immutable. */
export interface SnapshotPart {
  /** The folder in the snapshot, and the stand service (pid file) it belongs to. */
  name: string;
  service: string;
  live: string;
  link: LinkRule;
  filter: TreeFilter;
  /** Directories linked whole with `cp -al` (ClickHouse's databases: tens of thousands of part files). */
  bulk?: BulkDirs;
}

const layoutSchema = z.object({
  cluster: z.string(),
  nodes: z.array(z.object({ name: z.string(), shard: z.number(), tcp_port: z.number(), http_port: z.number(), interserver_port: z.number() })),
  zookeeper_port: z.number(),
  kafka: z.object({ version: z.string(), port: z.number(), controller_port: z.number() }),
  /** The world's size (world.size): a small world's data is not a canonical one's. Absent in snapshots older than it. */
  world_size: z.string().optional(),
});
export type StandLayout = z.infer<typeof layoutSchema>;

const copySchema = z.object({ files: z.number(), linkedFiles: z.number(), copiedBytes: z.number() });

export const manifestSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  name: z.string().regex(SNAPSHOT_NAME),
  position: z.number().int(),
  takenAt: z.string(),
  takenBy: z.object({ dagId: z.string(), runId: z.string() }),
  layout: layoutSchema,
  /** The world's DDL build when it was saved: per file of sql/ddl/, the checksum it was applied with. */
  ddl: z.array(z.object({ file: z.string(), checksum: z.string(), statements: z.number().int(), serverVersion: z.string() })),
  /** Per part: what it holds (files, linked and copied bytes). */
  parts: z.record(z.string(), copySchema),
});
export type SnapshotManifest = z.infer<typeof manifestSchema>;

export interface SnapshotListing {
  name: string;
  /** complete: restorable; partial: a save that did not finish; unreadable: its manifest is not one. */
  state: "complete" | "partial" | "unreadable";
  manifest?: SnapshotManifest;
  /** Why it cannot be restored (partial, unreadable). */
  problem?: string;
  /** The disk only the snapshot holds (its copies, and linked files nothing else names any more). */
  ownBytes: number;
  /** Bytes of files it shares with the live data or another snapshot (hard links: no disk of their own). */
  sharedBytes: number;
}

export class SnapshotRefusedError extends Error {
  constructor(
    readonly snapshot: string,
    message: string,
  ) {
    super(message);
    this.name = "SnapshotRefusedError";
  }
}

export function snapshotsDir(paths: StandPaths): string {
  return path.join(paths.root, "snapshots");
}

export function standLayout(config: StandConfig): StandLayout {
  return {
    cluster: config.clickhouse.cluster,
    nodes: config.clickhouse.nodes.map((n) => ({ name: n.name, shard: n.shard, tcp_port: n.tcp_port, http_port: n.http_port, interserver_port: n.interserver_port })),
    zookeeper_port: config.zookeeper.port,
    kafka: { version: config.kafka.version, port: config.kafka.port, controller_port: config.kafka.controller_port },
    world_size: config.world.size,
  };
}

/** The differences between two layouts, one phrase each: empty when a snapshot fits this stand. */
export function layoutDifferences(saved: StandLayout, now: StandLayout): string[] {
  const out: string[] = [];
  const a = JSON.stringify;
  if (saved.cluster !== now.cluster) out.push(`cluster ${saved.cluster} (now ${now.cluster})`);
  if (a(saved.nodes) !== a(now.nodes)) out.push(`ClickHouse nodes ${a(saved.nodes)} (now ${a(now.nodes)})`);
  if (saved.zookeeper_port !== now.zookeeper_port) out.push(`ZooKeeper port ${saved.zookeeper_port} (now ${now.zookeeper_port})`);
  if (a(saved.kafka) !== a(now.kafka)) out.push(`Kafka ${a(saved.kafka)} (now ${a(now.kafka)})`);
  if (saved.world_size !== undefined && saved.world_size !== now.world_size) out.push(`a ${saved.world_size} world (this stand plays a ${now.world_size ?? "?"} one: world.size)`);
  return out;
}

// ---- the parts and their immutable files ----

/** A ClickHouse part's files (data/<db>/<table>/<part>/<file> of a MergeTree table) never change once written. */
function clickhouseLinkRule(): LinkRule {
  const mergeTree = new Map<string, boolean>();
  return (relative, root) => {
    const m = /^data\/([^/]+)\/([^/]+)\/([^/]+)\/[^/]+$/.exec(relative);
    if (!m || m[3] === "detached") return false;
    const table = path.join(root, "data", m[1] ?? "", m[2] ?? "");
    let known = mergeTree.get(table);
    if (known === undefined) mergeTree.set(table, (known = existsSync(path.join(table, "format_version.txt"))));
    return known;
  };
}

/** Every database of the node but `system` (the node's own logs), its metadata and data; no tmp parts. */
const clickhouseFilter: TreeFilter = (relative) => {
  const [top, db, table] = relative.split("/");
  if (top !== "metadata" && top !== "data") return false;
  if (db === "system" || db === "system.sql") return false;
  return !(table !== undefined && relative.split("/").length >= 4 && (relative.split("/")[3] ?? "").startsWith("tmp"));
};

/** Each database's data directory (data/<db>, not system): linked whole, then mended. */
const clickhouseDatabases: BulkDirs = (root) =>
  existsSync(path.join(root, "data")) ? readdirSync(path.join(root, "data")).filter((db) => db !== "system").map((db) => `data/${db}`) : [];

/** A Kafka segment's .log/.index/.timeindex below the partition's newest segment is closed and immutable. */
const kafkaLinkRule: LinkRule = (relative, root) => {
  const m = /^([^/]+-\d+)\/(\d{20})\.(log|index|timeindex)$/.exec(relative);
  if (!m) return false;
  const bases = readdirSync(path.join(root, m[1] ?? "")).filter((f) => /^\d{20}\.log$/.test(f)).sort();
  const newest = bases[bases.length - 1];
  return newest !== undefined && `${m[2] ?? ""}.log` < newest;
};

const kafkaFilter: TreeFilter = (relative) => relative !== ".lock";

/** ZooKeeper's snapshot files are written once; its transaction logs are preallocated and appended. */
const zookeeperLinkRule: LinkRule = (relative) => /^version-2\/snapshot\.[0-9a-f]+$/.test(relative);

export function snapshotParts(config: StandConfig, paths: StandPaths): SnapshotPart[] {
  return [
    { name: "zookeeper", service: "zookeeper", live: paths.zookeeper.data, link: zookeeperLinkRule, filter: () => true },
    ...config.clickhouse.nodes.map((node) => ({
      name: `clickhouse-${node.name}`,
      service: `clickhouse-${node.name}`,
      live: paths.clickhouse.node(node.name).data,
      link: clickhouseLinkRule(),
      filter: clickhouseFilter,
      bulk: clickhouseDatabases,
    })),
    { name: "kafka", service: "kafka", live: paths.kafka.data, link: kafkaLinkRule, filter: kafkaFilter },
  ];
}

// ---- the store ----

export class SnapshotStore {
  readonly dir: string;
  constructor(
    private readonly config: StandConfig,
    private readonly paths: StandPaths,
  ) {
    this.dir = snapshotsDir(paths);
  }

  folder(name: string): string {
    return path.join(this.dir, checkedName(name));
  }

  list(): SnapshotListing[] {
    if (!existsSync(this.dir)) return [];
    const names = readdirSync(this.dir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith("."));
    const out: SnapshotListing[] = [];
    for (const entry of names) {
      const partial = entry.name.endsWith(PARTIAL);
      const name = partial ? entry.name.slice(0, -PARTIAL.length) : entry.name;
      const folder = path.join(this.dir, entry.name);
      const disk = snapshotDisk(folder);
      if (partial) {
        if (!out.some((s) => s.name === name)) out.push({ name, state: "partial", problem: halfWritten(name), ...disk });
        continue;
      }
      try {
        out.push({ name, state: "complete", manifest: this.readManifest(name), ...disk });
      } catch (err) {
        out.push({ name, state: "unreadable", problem: errorMessage(err), ...disk });
      }
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  readManifest(name: string): SnapshotManifest {
    const file = path.join(this.folder(name), MANIFEST);
    if (!existsSync(file)) throw new SnapshotRefusedError(name, existsSync(this.folder(name) + PARTIAL) ? halfWritten(name) : `snapshot '${name}' has no ${MANIFEST}: it is not a snapshot; remove it (make snapshot-rm NAME=${name})`);
    const parsed = manifestSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
    if (!parsed.success) throw new SnapshotRefusedError(name, `snapshot '${name}': ${file} is not a snapshot manifest of format ${SNAPSHOT_FORMAT} (${parsed.error.issues[0]?.path.join(".") ?? ""}: ${parsed.error.issues[0]?.message ?? ""}); take it again`);
    return parsed.data;
  }

  /** The complete snapshot of this name, checked part by part against its manifest; refuses anything else. */
  openForRestore(name: string): SnapshotManifest {
    const folder = this.folder(name);
    if (!existsSync(folder)) {
      if (existsSync(folder + PARTIAL)) throw new SnapshotRefusedError(name, halfWritten(name));
      const known = this.list().filter((s) => s.state === "complete").map((s) => s.name);
      throw new SnapshotRefusedError(name, `no snapshot named '${name}' in ${this.dir} (${known.length > 0 ? `there are: ${known.join(", ")}` : "there are none"}; make snapshots lists them)`);
    }
    const manifest = this.readManifest(name);
    for (const part of snapshotParts(this.config, this.paths)) {
      const saved = manifest.parts[part.name];
      const dir = path.join(folder, part.name);
      const files = existsSync(dir) ? listTree(dir).length : -1;
      if (saved === undefined || files !== saved.files) {
        throw new SnapshotRefusedError(name, `snapshot '${name}' is damaged: ${part.name} holds ${files < 0 ? "nothing" : `${files} files`}, its manifest says ${saved?.files ?? "no such part"}; take it again (make snapshot NAME=…)`);
      }
    }
    return manifest;
  }

  /** What saving the live data now would add to the disk. */
  measureLive(): TreeCopy {
    return snapshotParts(this.config, this.paths).reduce((sum, part) => addCopies(sum, existsSync(part.live) ? measureTree(part.live, part.link, part.filter) : emptyCopy()), emptyCopy());
  }

  /** Refuses, naming the figures, when `bytes` more would leave less than min_free_bytes free. */
  checkRoom(name: string, bytes: number, what: string): void {
    const free = this.freeBytes();
    const keep = this.config.snapshots.min_free_bytes;
    if (free - bytes < keep) {
      throw new SnapshotRefusedError(name, `not enough disk for ${what} of '${name}': it copies ${mib(bytes)}, ${mib(free)} is free on ${this.paths.root}'s disk and ${mib(keep)} must stay free (snapshots.min_free_bytes); free some space (make snapshot-rm NAME=… removes a snapshot)`);
    }
  }

  freeBytes(): number {
    const staged = stagedFreeBytes(this.config, this.dir);
    if (staged !== undefined) return staged;
    const fs = statfsSync(existsSync(this.dir) ? this.dir : this.paths.root);
    return fs.bavail * fs.bsize;
  }

  /** Copies every part's live data (services stopped) into <name>.partial, then the manifest, then renames. */
  async save(name: string, manifest: Omit<SnapshotManifest, "parts" | "format" | "name">, signal?: AbortSignal): Promise<SnapshotManifest> {
    const final = this.folder(name);
    const partial = final + PARTIAL;
    rmSync(partial, { recursive: true, force: true }); // an earlier try's half
    const parts: Record<string, TreeCopy> = {};
    // the parts side by side: the nodes' cp -al run as processes while the small parts copy here
    await Promise.all(
      snapshotParts(this.config, this.paths).map(async (part) => {
        parts[part.name] = await copyTree(part.live, path.join(partial, part.name), part.link, part.filter, signal, part.bulk);
      }),
    );
    for (const part of snapshotParts(this.config, this.paths)) killPoint(this.config, this.dir, "save", part.name);
    const full: SnapshotManifest = { format: SNAPSHOT_FORMAT, name, ...manifest, parts };
    writeFileSync(path.join(partial, MANIFEST), JSON.stringify(full, null, 2) + "\n");
    renameSync(partial, final);
    return full;
  }

  /**
   * Puts every part of the snapshot back in place of the live data (services stopped). The live
   * data is first renamed aside into .trash (one rename per directory, whatever its size), and
   * removed by emptyTrash once the services serve again.
   */
  async restore(name: string, signal?: AbortSignal): Promise<TreeCopy> {
    const folder = this.folder(name);
    const trash = path.join(this.dir, ".trash", `${Date.now()}-${name}`);
    const copies: TreeCopy[] = [];
    for (const part of snapshotParts(this.config, this.paths)) {
      moveLiveAside(part, path.join(trash, part.name));
      killPoint(this.config, this.dir, "restore", part.name);
    }
    await Promise.all(
      snapshotParts(this.config, this.paths).map(async (part) => {
        copies.push(await copyTree(path.join(folder, part.name), part.live, part.link, part.filter, signal, part.bulk));
      }),
    );
    return copies.reduce(addCopies, emptyCopy());
  }

  /** Removes what restores moved aside (in the background once the services serve; any leftover at the next save or restore). */
  async emptyTrash(): Promise<void> {
    await rm(path.join(this.dir, ".trash"), { recursive: true, force: true });
  }

  remove(name: string): boolean {
    const folder = this.folder(name);
    const existed = existsSync(folder) || existsSync(folder + PARTIAL);
    rmSync(folder, { recursive: true, force: true });
    rmSync(folder + PARTIAL, { recursive: true, force: true });
    return existed;
  }
}

/** Renames what the part covers out of the live data dir into `aside` (for ClickHouse, every database but system). */
function moveLiveAside(part: SnapshotPart, aside: string): void {
  if (!existsSync(part.live)) return;
  mkdirSync(aside, { recursive: true });
  if (!part.name.startsWith("clickhouse-")) {
    renameSync(part.live, path.join(aside, "data"));
    mkdirSync(part.live, { recursive: true });
    return;
  }
  for (const top of ["metadata", "data"]) {
    const inner = path.join(part.live, top);
    if (!existsSync(inner)) continue;
    mkdirSync(path.join(aside, top), { recursive: true });
    for (const db of readdirSync(inner)) if (part.filter(`${top}/${db}`, true)) renameSync(path.join(inner, db), path.join(aside, top, db));
  }
}

/** The disk a snapshot holds: blocks of files only it names (its copies, and parts the live data has
 * since merged away), and bytes it shares with the live data or another snapshot (hard links). */
export function snapshotDisk(folder: string): { ownBytes: number; sharedBytes: number } {
  let ownBytes = 0;
  let sharedBytes = 0;
  for (const rel of listTree(folder)) {
    const st = lstatSync(path.join(folder, rel));
    if (st.nlink > 1) sharedBytes += st.size;
    else ownBytes += Math.min(st.size, st.blocks * 512);
  }
  return { ownBytes, sharedBytes };
}

export function checkedName(name: string): string {
  if (!SNAPSHOT_NAME.test(name) || name.endsWith(PARTIAL)) {
    throw new SnapshotRefusedError(name, `'${name}' is not a snapshot name: 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit, not ending in ${PARTIAL}`);
  }
  return name;
}

function halfWritten(name: string): string {
  return `snapshot '${name}' is half-written: its save did not finish (no manifest; a run killed or failed mid-save); take it again (make snapshot NAME=${name}) or remove it (make snapshot-rm NAME=${name})`;
}

/** One short digest of a DDL build (file and checksum of each), to tell builds apart in a list. */
export function schemaChecksum(ddl: readonly { file: string; checksum: string }[]): string {
  const lines = [...ddl].sort((a, b) => (a.file < b.file ? -1 : 1)).map((d) => `${d.file} ${d.checksum}`);
  return createHash("sha256").update(lines.join("\n")).digest("hex").slice(0, 12);
}

export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
