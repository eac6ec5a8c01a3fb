// Schema status: sql/ddl/ as it is now against the world's build in the ledger, file by file, plus
// the ClickHouse platform probed live. `make up` never applies changed DDL; this is where the
// difference shows, and `make rebuild-storage` is how the world takes it.
import type pg from "pg";
import { connectClickHouse, detectPlatform } from "../clickhouse/index.ts";
import { loadStandConfig } from "../config/index.ts";
import { PG_ERROR } from "../runner/index.ts";
import { errorCode, errorMessage } from "../errors.ts";
import { checkCatalogue, type CatalogueDrift } from "./catalogue.ts";
import { currentDdlFiles, readWorldBuild, type DdlFileChecksum, type LedgerRow } from "./schema-ledger.ts";

/** The runner database has no world.schema_ledger table: no runner applied the world's migrations to it. */
export class SchemaLedgerMissingError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the runner database has no schema ledger yet (world.schema_ledger): start the runner once so it applies the world's migrations (make up)", options);
    this.name = "SchemaLedgerMissingError";
  }
}

/** changed: the file differs from what the world was built with; new: not in the build; removed: in the build, gone from sql/ddl. */
export type FileDrift = "changed" | "new" | "removed";

export interface FileStatus {
  file: string;
  drift: FileDrift | null;
  current_checksum: string | null;
  built_checksum: string | null;
  applied_at: string | null;
  dag_run_id: string | null;
  task_id: string | null;
  server_version: string | null;
}

export interface PlatformProbe {
  node: string;
  version: string | null;
  has_sql_roles: boolean | null;
  has_json_functions: boolean | null;
  has_date_time64: boolean | null;
  has_sql_dictionaries: boolean | null;
  error: string | null;
}

export interface SchemaStatus {
  /** in_sync: every file as built; drift: at least one file differs; no_build: no world was ever built from sql/ddl. */
  status: "in_sync" | "drift" | "no_build";
  drift: boolean;
  world_position: string | null;
  build: { dag_id: string; dag_run_id: string; applied_at: string; server_version: string } | null;
  summary: { unchanged: number; changed: number; new: number; removed: number };
  files: FileStatus[];
  /** The live catalogue of every node against the one the world was built with. */
  catalogue: CatalogueStatus;
  platform: PlatformProbe;
  note: string;
}

export interface CatalogueStatus {
  /** The run that recorded the built catalogue; null for a world built before it was recorded (then only the databases are expected). */
  recorded_by_run: string | null;
  nodes_checked: string[];
  /** Nodes that did not answer: nothing is claimed about them. */
  unreachable: Record<string, string>;
  missing: CatalogueDrift[];
}

function fileStatus(file: string, current: DdlFileChecksum | undefined, built: LedgerRow | undefined, hasBuild: boolean): FileStatus {
  let drift: FileDrift | null = null;
  if (hasBuild && !built) drift = "new";
  else if (built && !current) drift = "removed";
  else if (built && current && built.checksum !== current.checksum) drift = "changed";
  return {
    file,
    drift,
    current_checksum: current?.checksum ?? null,
    built_checksum: built?.checksum ?? null,
    applied_at: built?.appliedAt.toISOString() ?? null,
    dag_run_id: built?.runId ?? null,
    task_id: built?.taskId ?? null,
    server_version: built?.serverVersion ?? null,
  };
}

/** Pure: the per-file comparison. Removed files are listed after the current ones, by name. */
export function compareWithBuild(current: readonly DdlFileChecksum[], build: readonly LedgerRow[]): FileStatus[] {
  const builtByFile = new Map(build.map((row) => [row.file, row]));
  const currentNames = new Set(current.map((c) => c.file));
  const hasBuild = build.length > 0;
  const rows = current.map((c) => fileStatus(c.file, c, builtByFile.get(c.file), hasBuild));
  const removed = build.filter((row) => !currentNames.has(row.file)).map((row) => row.file).sort();
  return [...rows, ...removed.map((file) => fileStatus(file, undefined, builtByFile.get(file), hasBuild))];
}

export function summarize(
  files: readonly FileStatus[],
  build: readonly LedgerRow[],
  position: string | null,
  platform: PlatformProbe,
  catalogue: CatalogueStatus = { recorded_by_run: null, nodes_checked: [], unreachable: {}, missing: [] },
): SchemaStatus {
  // a file counts as unchanged only when the world was built with it
  const count = (d: FileDrift | null) => files.filter((f) => f.drift === d && (d !== null || f.built_checksum !== null)).length;
  const summary = { unchanged: count(null), changed: count("changed"), new: count("new"), removed: count("removed") };
  const fileDrift = summary.changed + summary.new + summary.removed > 0;
  // a world with no build has no catalogue to miss
  const catalogueDrift = build.length > 0 && catalogue.missing.length > 0;
  const drift = fileDrift || catalogueDrift;
  const latest = build.reduce<LedgerRow | undefined>((a, b) => (!a || b.appliedAt > a.appliedAt ? b : a), undefined);
  return {
    status: build.length === 0 ? "no_build" : drift ? "drift" : "in_sync",
    drift,
    world_position: position,
    build: latest
      ? { dag_id: latest.dagId, dag_run_id: latest.runId, applied_at: latest.appliedAt.toISOString(), server_version: latest.serverVersion }
      : null,
    summary,
    files: [...files],
    catalogue,
    platform,
    note: catalogueDrift
      ? `the world's catalogue is not what was built (${catalogue.missing.length} missing or changed, e.g. ${catalogue.missing[0]?.detail ?? "?"}): run make rebuild-storage`
      : fileDrift
      ? "make up never applies changed DDL to a ready world; make rebuild-storage recreates the world from the current sql/ddl/"
      : build.length === 0
        ? "no world has been built yet: make up creates it and records every DDL file it applies"
        : "the world was built from the current sql/ddl/",
  };
}

/** SELECT version() on the first node as `reader`; a failure is reported, not thrown (the ledger still answers). */
export async function probePlatform(timeoutMs = 5000): Promise<PlatformProbe> {
  const config = loadStandConfig();
  const node = config.clickhouse.nodes[0]?.name ?? "?";
  const clickhouse = connectClickHouse({ account: "reader", config, requestTimeoutMs: timeoutMs });
  try {
    const p = await detectPlatform(clickhouse);
    return {
      node,
      version: p.version,
      has_sql_roles: p.hasSqlRoles,
      has_json_functions: p.hasJsonFunctions,
      has_date_time64: p.hasDateTime64,
      has_sql_dictionaries: p.hasSqlDictionaries,
      error: null,
    };
  } catch (err) {
    const empty = { version: null, has_sql_roles: null, has_json_functions: null, has_date_time64: null, has_sql_dictionaries: null };
    return { node, ...empty, error: errorMessage(err) };
  } finally {
    await clickhouse.close();
  }
}

/** The whole status: sql/ddl/ now, the ledger's build (from `pool`, the runner database), the platform.
 * Throws SchemaLedgerMissingError when the ledger table does not exist. */
export async function readSchemaStatus(pool: pg.Pool, position: string | null): Promise<SchemaStatus> {
  const config = loadStandConfig();
  const [current, platform] = await Promise.all([currentDdlFiles(), probePlatform()]);
  let build: LedgerRow[];
  let check;
  try {
    [build, check] = await Promise.all([readWorldBuild(pool), checkCatalogue(pool, config)]);
  } catch (err) {
    if (errorCode(err) === PG_ERROR.UNDEFINED_TABLE) throw new SchemaLedgerMissingError({ cause: err });
    throw err;
  }
  const catalogue: CatalogueStatus = {
    recorded_by_run: check.recordedByRun,
    nodes_checked: check.nodesChecked,
    unreachable: check.unreachable,
    missing: check.missing,
  };
  return summarize(compareWithBuild(current, build), build, position, platform, catalogue);
}
