// DAG versions in Postgres (000017): a DAG's serialized structure, the version made per change of
// its structure or code, the code itself (source and bundle), import errors and reparse requests.
// The DAG processor publishes what it parsed here; every runner reads its DAGs back from here.
import { createHash } from "node:crypto";
import type pg from "pg";

import { inTransaction, query, queryOne, statement } from "./db.ts";
import { type Dag, scheduleText } from "./dag.ts";
import type { DagTaskRecord, JsonValue } from "./types.ts";

/** A task as a version keeps it: what the Graph view reads, and its retry cap (to compare versions). */
export interface TaskStructure extends DagTaskRecord {
  maxRetryDelayMs: number;
}

/** A DAG serialized (Airflow's SerializedDagModel): what the API and the web view read. */
export interface DagStructure {
  dagId: string;
  description: string;
  schedule: string | null;
  isPausedUponCreation: boolean;
  maxActiveRuns: number;
  exclusive: string[];
  params: JsonValue;
  /** In a topological order. */
  tasks: TaskStructure[];
}

export function serializeDag(dag: Dag): DagStructure {
  return {
    dagId: dag.id,
    description: dag.description,
    schedule: scheduleText(dag),
    isPausedUponCreation: dag.isPausedUponCreation,
    maxActiveRuns: dag.maxActiveRuns,
    exclusive: [...dag.exclusive],
    params: dag.paramsJsonSchema(),
    tasks: dag.taskIds.flatMap((taskId) => {
      const task = dag.task(taskId);
      if (!task) return [];
      return [
        {
          taskId,
          kind: task.kind,
          description: task.description,
          upstream: [...new Set(task.upstream)],
          downstream: [...dag.downstream(taskId)],
          retries: task.retries,
          retryDelayMs: task.retryDelayMs,
          maxRetryDelayMs: task.maxRetryDelayMs,
          executionTimeoutMs: task.executionTimeoutMs,
          triggerDagId: task.kind === "waitingTrigger" ? task.triggerDagId : null,
        },
      ];
    }),
  };
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The code of a DAG parsed from a file: its hash names the version's bundle. */
export interface DagCode {
  hash: string;
  source: string;
  bundle: string;
}

export interface PublishedDag {
  dag: Dag;
  /** Relative to the repository (dags/<file>.ts). */
  fileloc: string;
  /** The DAG folder it comes from (Airflow's bundle); dags-folder when absent (a DAG given in code). */
  bundleName?: string;
  code: DagCode | null;
  parseDurationMs: number | null;
  /** Its file was parsed for this publication (its last_parsed_time moves); false: carried over
   * unchanged from an earlier parse, written only if the database differs. */
  reparsed: boolean;
}

export interface PublishRequest {
  dags: readonly PublishedDag[];
  /** A whole folder was read: a DAG no file declares goes stale, unless its file is among the
   * broken ones (a broken file keeps its DAGs' last versions, as Airflow does). */
  folder?: {
    importErrors: readonly { filename: string; stackTrace: string; bundleName?: string }[];
  };
}

export interface PublishedVersion {
  dagId: string;
  versionId: string;
  versionNumber: number;
  created: boolean;
}

/** Serializes publishers: a pool's processor, and engines given DAGs in code. */
const PUBLISH_LOCK = [7302, 1] as const;
export const DAGS_CHANNEL = "runner_dags";
/** Airflow's default bundle name: the repository's dags/ (and a DAG given in code). */
export const DEFAULT_BUNDLE = "dags-folder";
export const PARSE_CHANNEL = "runner_dag_parse";

const UPSERT_DAG = statement(
  "publish_dag",
  `insert into runner.dags (dag_id, is_paused, description, schedule, max_active_runs, task_ids, fileloc, exclusive,
                            is_stale, last_parsed_time, last_parse_duration)
   values ($1, $2, $3, $4, $5, $6, $7, $8, false, clock_timestamp(), $9)
   on conflict (dag_id) do update
      set description = excluded.description, schedule = excluded.schedule,
          max_active_runs = excluded.max_active_runs, task_ids = excluded.task_ids, exclusive = excluded.exclusive,
          fileloc = excluded.fileloc, last_seen_at = now(), is_stale = false,
          last_parsed_time = excluded.last_parsed_time, last_parse_duration = excluded.last_parse_duration`,
);
const LATEST = statement(
  "latest_dag_version",
  `select v.id, v.version_number, v.structure_hash, v.code_hash, d.fileloc, d.is_stale
     from runner.dags d join runner.dag_versions v on v.id = d.latest_version_id
    where d.dag_id = $1`,
);
const INSERT_CODE = statement(
  "insert_dag_code",
  "insert into runner.dag_code (code_hash, fileloc, source, bundle) values ($1, $2, $3, $4) on conflict (code_hash) do nothing",
);
const INSERT_VERSION = statement(
  "insert_dag_version",
  `insert into runner.dag_versions (dag_id, version_number, code_hash, structure, structure_hash, fileloc, bundle_name)
   select $1, coalesce(max(version_number), 0) + 1, $2, $3, $4, $5, $6 from runner.dag_versions where dag_id = $1
   returning id, version_number`,
);
const SET_LATEST = statement("set_latest_dag_version", "update runner.dags set latest_version_id = $2 where dag_id = $1");
const MARK_STALE = statement(
  "mark_stale_dags",
  `update runner.dags set is_stale = true
    where not is_stale and dag_id <> all($1::text[]) and fileloc <> all($2::text[]) and latest_version_id is not null
   returning dag_id`,
);
const UPSERT_IMPORT_ERROR = statement(
  "upsert_import_error",
  `insert into runner.import_errors (filename, stack_trace, bundle_name) values ($1, $2, $3)
   on conflict (filename) do update
      set stack_trace = excluded.stack_trace, bundle_name = excluded.bundle_name, timestamp = clock_timestamp()
    where runner.import_errors.stack_trace is distinct from excluded.stack_trace`,
);
const CLEAR_IMPORT_ERRORS = statement("clear_import_errors", "delete from runner.import_errors where filename <> all($1::text[])");
const NOTIFY_DAGS = statement("notify_dags", `select pg_notify('${DAGS_CHANNEL}', $1)`);

/**
 * Records the DAGs as parsed: a DAG row per DAG (a new one paused if it asks to be; a known one keeps
 * its flag), a new version where the structure or the code changed, and, for a whole folder, the
 * stale DAGs and the import errors. One transaction; every runner is told on DAGS_CHANNEL.
 */
export async function publishDags(pool: pg.Pool, request: PublishRequest): Promise<PublishedVersion[]> {
  return inTransaction(pool, async (client) => {
    await client.query("select pg_advisory_xact_lock($1, $2)", [...PUBLISH_LOCK]);
    const published: PublishedVersion[] = [];
    for (const entry of request.dags) published.push(await publishOne(client, entry));
    let stale: string[] = [];
    if (request.folder) {
      const broken = request.folder.importErrors.map((e) => e.filename);
      stale = (await query<{ dag_id: string }>(client, MARK_STALE, [request.dags.map((d) => d.dag.id), broken])).map((r) => r.dag_id);
      for (const e of request.folder.importErrors) await query(client, UPSERT_IMPORT_ERROR, [e.filename, e.stackTrace, e.bundleName ?? DEFAULT_BUNDLE]);
      await query(client, CLEAR_IMPORT_ERRORS, [broken]);
    }
    const changed = published.filter((p) => p.created).map((p) => `${p.dagId}@${p.versionNumber}`);
    await query(client, NOTIFY_DAGS, [JSON.stringify({ changed, stale })]);
    return published;
  });
}

async function publishOne(client: pg.PoolClient, entry: PublishedDag): Promise<PublishedVersion> {
  const { dag, fileloc, code } = entry;
  const structure = serializeDag(dag);
  const structureHash = sha256(JSON.stringify(structure));
  const latest = await queryOne<{ id: string; version_number: number; structure_hash: string; code_hash: string | null; fileloc: string; is_stale: boolean }>(
    client,
    LATEST,
    [dag.id],
  );
  const same = latest !== undefined && latest.structure_hash === structureHash && latest.code_hash === (code?.hash ?? null);
  if (same && !entry.reparsed && latest.fileloc === fileloc && !latest.is_stale) {
    return { dagId: dag.id, versionId: latest.id, versionNumber: latest.version_number, created: false };
  }
  await query(client, UPSERT_DAG, [
    dag.id,
    dag.isPausedUponCreation,
    dag.description,
    scheduleText(dag),
    dag.maxActiveRuns,
    dag.taskIds,
    fileloc,
    dag.exclusive,
    entry.parseDurationMs === null ? null : entry.parseDurationMs / 1000,
  ]);
  if (same) return { dagId: dag.id, versionId: latest.id, versionNumber: latest.version_number, created: false };
  if (code) await query(client, INSERT_CODE, [code.hash, fileloc, code.source, code.bundle]);
  const row = await queryOne<{ id: string; version_number: number }>(client, INSERT_VERSION, [dag.id, code?.hash ?? null, JSON.stringify(structure), structureHash, fileloc, entry.bundleName ?? DEFAULT_BUNDLE]);
  if (!row) throw new Error(`no version was recorded for DAG '${dag.id}'`);
  await query(client, SET_LATEST, [dag.id, row.id]);
  return { dagId: dag.id, versionId: row.id, versionNumber: row.version_number, created: true };
}

/** A DAG as the database has it now: its latest version. */
export interface CurrentDag {
  dagId: string;
  isStale: boolean;
  versionId: string;
  versionNumber: number;
  codeHash: string | null;
  fileloc: string;
}

const CURRENT = statement(
  "current_dags",
  `select d.dag_id, d.is_stale, v.id as version_id, v.version_number, v.code_hash, d.fileloc
     from runner.dags d join runner.dag_versions v on v.id = d.latest_version_id order by d.dag_id`,
);

export async function readCurrentDags(db: pg.Pool | pg.PoolClient): Promise<CurrentDag[]> {
  const rows = await query<{ dag_id: string; is_stale: boolean; version_id: string; version_number: number; code_hash: string | null; fileloc: string }>(db, CURRENT, []);
  return rows.map((r) => ({ dagId: r.dag_id, isStale: r.is_stale, versionId: r.version_id, versionNumber: r.version_number, codeHash: r.code_hash, fileloc: r.fileloc }));
}

const VERSION_CODE = statement(
  "dag_version_code",
  `select v.dag_id, v.version_number, v.code_hash, c.bundle
     from runner.dag_versions v left join runner.dag_code c on c.code_hash = v.code_hash where v.id = $1`,
);

export interface VersionCode {
  dagId: string;
  versionNumber: number;
  codeHash: string | null;
  bundle: string | null;
}

export async function readVersionCode(db: pg.Pool, versionId: string): Promise<VersionCode | undefined> {
  const row = await queryOne<{ dag_id: string; version_number: number; code_hash: string | null; bundle: string | null }>(db, VERSION_CODE, [versionId]);
  return row && { dagId: row.dag_id, versionNumber: row.version_number, codeHash: row.code_hash, bundle: row.bundle };
}

const KNOWN_CODE = statement("known_dag_code", "select code_hash from runner.dag_code where code_hash = any($1::text[])");

/** Which of these bundle hashes a parse has accepted before (their files need no isolated parse again). */
export async function knownCodeHashes(db: pg.Pool, hashes: readonly string[]): Promise<Set<string>> {
  const rows = await query<{ code_hash: string }>(db, KNOWN_CODE, [hashes]);
  return new Set(rows.map((r) => r.code_hash));
}

const REQUEST_PARSE = statement(
  "request_dag_parse",
  `with r as (insert into runner.dag_parse_requests (fileloc, requested_by) values ($1, $2)
              on conflict (fileloc) do update set requested_at = clock_timestamp(), requested_by = excluded.requested_by
              returning fileloc)
   select pg_notify('${PARSE_CHANNEL}', fileloc) from r`,
);
const TAKE_PARSE_REQUESTS = statement("take_dag_parse_requests", "delete from runner.dag_parse_requests returning fileloc");

export async function requestParse(db: pg.Pool, fileloc: string, by: string): Promise<void> {
  await query(db, REQUEST_PARSE, [fileloc, by]);
}

export async function takeParseRequests(db: pg.Pool): Promise<string[]> {
  return (await query<{ fileloc: string }>(db, TAKE_PARSE_REQUESTS, [])).map((r) => r.fileloc);
}
