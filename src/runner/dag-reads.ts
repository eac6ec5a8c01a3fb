// Reads of the DAGs as the database has them (000017): each DAG's latest version serialized, its
// versions, its source at a version, and the import errors. Every runner of a pool answers these
// from the same rows, so two runners never disagree about a DAG.
import type pg from "pg";
import type { DagStructure } from "./dag-versions.ts";
import { query, queryOne, statement } from "./db.ts";
import { toVersionRecord, VERSION_JSON, type VersionJson } from "./read-models.ts";
import type { DagSourceRecord, DagSummary, DagVersionRecord, ImportErrorRecord, Page } from "./types.ts";

interface DagRow {
  dag_id: string;
  is_paused: boolean;
  is_stale: boolean;
  fileloc: string;
  last_parsed_time: Date | null;
  last_parse_duration: number | null;
  has_import_errors: boolean;
  structure: DagStructure;
  version: VersionJson;
}

const DAG_SELECT = `select d.dag_id, d.is_paused, d.is_stale, d.fileloc, d.last_parsed_time, d.last_parse_duration,
       exists (select 1 from runner.import_errors e where e.filename = d.fileloc) as has_import_errors,
       v.structure, ${VERSION_JSON} as version
  from runner.dags d join runner.dag_versions v on v.id = d.latest_version_id`;

const DAGS = statement("read_dags", `${DAG_SELECT} where $1::text[] is null or d.dag_id = any($1::text[]) order by d.dag_id`);

function toSummary(row: DagRow): DagSummary {
  const s = row.structure;
  return {
    dagId: row.dag_id,
    description: s.description,
    schedule: s.schedule,
    isPaused: row.is_paused,
    maxActiveRuns: s.maxActiveRuns,
    exclusive: s.exclusive,
    taskIds: s.tasks.map((t) => t.taskId),
    paramsJsonSchema: s.params,
    fileloc: row.fileloc,
    isStale: row.is_stale,
    lastParsedTime: row.last_parsed_time,
    lastParseDurationS: row.last_parse_duration,
    hasImportErrors: row.has_import_errors,
    latestVersion: toVersionRecord(row.version),
    tasks: s.tasks.map((t) => ({
      taskId: t.taskId,
      kind: t.kind,
      description: t.description,
      upstream: t.upstream,
      downstream: t.downstream,
      retries: t.retries,
      retryDelayMs: t.retryDelayMs,
      executionTimeoutMs: t.executionTimeoutMs,
      triggerDagId: t.triggerDagId,
    })),
  };
}

/** The DAGs recorded (only those named, when dagIds is given), by id. */
export async function readDags(db: pg.Pool, dagIds: readonly string[] | null): Promise<DagSummary[]> {
  return (await query<DagRow>(db, DAGS, [dagIds])).map(toSummary);
}

export interface DagVersionsQuery {
  limit: number;
  offset: number;
  versionNumber?: number;
  bundleName?: string;
  descending?: boolean;
}

const VERSIONS = statement(
  "read_dag_versions",
  `select ${VERSION_JSON} as version, count(*) over () as total from runner.dag_versions v
    where v.dag_id = $1 and ($2::integer is null or v.version_number = $2) and ($6::text is null or v.bundle_name = $6)
    order by case when $3 then v.version_number end desc, v.version_number limit $4 offset $5`,
);

export async function readDagVersions(
  db: pg.Pool,
  dagId: string,
  q: DagVersionsQuery,
): Promise<Page<DagVersionRecord>> {
  const rows = await query<{ version: VersionJson; total: number }>(db, VERSIONS, [dagId, q.versionNumber ?? null, q.descending ?? false, q.limit, q.offset, q.bundleName ?? null]);
  if (rows.length === 0 && q.offset > 0) {
    // past the last page the window count is absent; ask for it with no offset
    const first = await query<{ total: number }>(db, VERSIONS, [dagId, q.versionNumber ?? null, false, 1, 0, q.bundleName ?? null]);
    return { items: [], totalEntries: first[0]?.total ?? 0 };
  }
  return { items: rows.map((r) => toVersionRecord(r.version)), totalEntries: rows[0]?.total ?? 0 };
}

const SOURCE = statement(
  "read_dag_source",
  `select v.version_number, c.source from runner.dag_versions v left join runner.dag_code c on c.code_hash = v.code_hash
    where v.dag_id = $1 and ($2::integer is null or v.version_number = $2)
    order by v.version_number desc limit 1`,
);

/** The source of a version (the latest when versionNumber is null); undefined when there is no such version. */
export async function readDagSource(db: pg.Pool, dagId: string, versionNumber: number | null): Promise<DagSourceRecord | undefined> {
  const row = await queryOne<{ version_number: number; source: string | null }>(db, SOURCE, [dagId, versionNumber]);
  return row && { dagId, versionNumber: row.version_number, content: row.source };
}

const VERSION_STRUCTURE = statement(
  "read_dag_version_structure",
  "select v.structure from runner.dag_versions v where v.dag_id = $1 and v.version_number = $2",
);

/** A version's tasks, for the Graph view of a run made from it. */
export async function readVersionStructure(db: pg.Pool, dagId: string, versionNumber: number): Promise<DagStructure | undefined> {
  return (await queryOne<{ structure: DagStructure }>(db, VERSION_STRUCTURE, [dagId, versionNumber]))?.structure;
}

interface ImportErrorRow {
  id: number;
  filename: string;
  bundle_name: string;
  timestamp: Date;
  stack_trace: string;
}

const IMPORT_ERRORS = statement("read_import_errors", "select id, filename, bundle_name, timestamp, stack_trace from runner.import_errors order by id");

export async function readImportErrors(db: pg.Pool): Promise<ImportErrorRecord[]> {
  return (await query<ImportErrorRow>(db, IMPORT_ERRORS, [])).map((r) => ({
    id: r.id,
    filename: r.filename,
    bundleName: r.bundle_name,
    timestamp: r.timestamp,
    stackTrace: r.stack_trace,
  }));
}
