// The schema ledger (world.schema_ledger, src/world/migrations/000001): world_initialize records
// every DDL file it applied (file, checksum, run, task, time, server version); the status route
// reads the world's build back and compares it with sql/ddl/. The build is the rows of the latest run that applied DDL, so a
// rebuild replaces the previous world's record instead of mixing with it.
import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { loadStandConfig, postgresUrl } from "../config/index.ts";
import { platformForVersion } from "../clickhouse/index.ts";
import { DDL_DIR } from "./constants.ts";
import { readCatalogCsv, worldTemplateValues } from "./ddl-template.ts";
import { ddlChecksum, listDdlFiles } from "./ddl-files.ts";

export interface LedgerEntry {
  file: string;
  checksum: string;
  statements: number;
  dagId: string;
  runId: string;
  taskId: string;
  serverVersion: string;
}

export interface LedgerRow extends LedgerEntry {
  appliedAt: Date;
}

export interface DdlFileChecksum {
  file: string;
  checksum: string;
}

const INSERT = `insert into world.schema_ledger (file, checksum, statements, dag_id, run_id, task_id, server_version)
                values ($1, $2, $3, $4, $5, $6, $7)`;

// the latest row per file within the run that applied DDL last
const WORLD_BUILD = `
  with latest_run as (
    select run_id from world.schema_ledger order by applied_at desc, id desc limit 1
  )
  select distinct on (l.file)
         l.file, l.checksum, l.statements, l.dag_id, l.run_id, l.task_id, l.applied_at, l.server_version
    from world.schema_ledger l join latest_run r on r.run_id = l.run_id
   order by l.file, l.applied_at desc, l.id desc`;

interface BuildRow {
  file: string;
  checksum: string;
  statements: number;
  dag_id: string;
  run_id: string;
  task_id: string;
  applied_at: Date;
  server_version: string;
}

/**
 * The .sql files of sql/ddl/ in apply (name) order, with the checksum applying each would record now:
 * tasks/ddl.ts's own, over the file's text and the data it inlines (the catalog). Only data values
 * enter that checksum, never server fragments, so any platform renders the same values for it.
 */
export async function currentDdlFiles(dir: string = DDL_DIR): Promise<DdlFileChecksum[]> {
  const values = worldTemplateValues({ platform: platformForVersion("18.16.1"), config: loadStandConfig(), catalogCsv: await readCatalogCsv() });
  const names = await listDdlFiles(dir);
  return Promise.all(names.map(async (file) => ({ file, checksum: ddlChecksum(await readFile(path.join(dir, file), "utf8"), values) })));
}

/** The runner database's URL (where the ledger lives), from the stand config. */
export function runnerDatabaseUrl(): string {
  const config = loadStandConfig();
  return postgresUrl(config.postgres.runner_database, config);
}

/** One short-lived connection to the runner database (the ledger and the catalogue live there),
 * for work that runs rarely: a DDL task, a catalogue record, a check. */
export async function withRunnerDb<T>(work: (client: pg.Client) => Promise<T>, applicationName = "schema-ledger", pgUrl: string = runnerDatabaseUrl()): Promise<T> {
  const client = new pg.Client({ connectionString: pgUrl, application_name: applicationName });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Records one applied file. */
export async function recordAppliedDdl(entry: LedgerEntry, pgUrl: string = runnerDatabaseUrl()): Promise<void> {
  await withRunnerDb(
    (client) => client.query(INSERT, [entry.file, entry.checksum, entry.statements, entry.dagId, entry.runId, entry.taskId, entry.serverVersion]),
    "schema-ledger",
    pgUrl,
  );
}

/** The world's build: per file, what the latest DDL-applying run recorded. Empty before any world. */
export async function readWorldBuild(db: pg.Pool | pg.Client): Promise<LedgerRow[]> {
  const { rows } = await db.query<BuildRow>(WORLD_BUILD);
  return rows.map((r) => ({
    file: r.file,
    checksum: r.checksum,
    statements: r.statements,
    dagId: r.dag_id,
    runId: r.run_id,
    taskId: r.task_id,
    appliedAt: r.applied_at,
    serverVersion: r.server_version,
  }));
}
