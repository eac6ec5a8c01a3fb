// The DDS and DM transforms of etl_pipeline: which days to build (derived from the data by
// sql/etl/00-dds-dates-to-process.sql and 01-dm-dates-to-process.sql), and the build itself
// (sql/etl/dds/*.sql, then sql/etl/dm/*.sql, each file's statements in order).
//
// Account: everything here runs as `etl` from the first node. Every statement is a SELECT or an
// INSERT … SELECT: the idempotency design (sql/ddl/45-dds-tables.sql) needs no TRUNCATE, DROP
// PARTITION or OPTIMIZE, which etl (allow_ddl=0) could not run, so no step needs `lifecycle`.
//
// A run gets one _version for all its rows and commit rows: above every version already in the dds
// and dm ledgers, and at least the current time in milliseconds, so versions keep growing across
// runs, processes and reruns of a failed run (see nextRunVersion).
import { readdir } from "node:fs/promises";
import path from "node:path";
import { connectClickHouse, clickhouseNodeConfig, type StandClickHouse, detectPlatform, type Platform, querySqlFile, readSqlBody, readSqlFile, runSqlFile, splitSqlStatements, usesPlaceholder, type FileReport, type SqlFile } from "../src/clickhouse/index.ts";
import { loadStandConfig, type StandConfig } from "../src/config/index.ts";
import type { TaskIo } from "../src/world/index.ts";
import { ETL_DIR, ETL_REQUEST_TIMEOUT_MS, normalizeDates, runTemplateValues, serverNow } from "./etl-sql.ts";

export type EtlLayer = "dds" | "dm";

const DATES_FILE: Readonly<Record<EtlLayer, string>> = {
  dds: "00-dds-dates-to-process.sql",
  dm: "01-dm-dates-to-process.sql",
};

/** Every table that carries _version: a failed run may have written data rows without their commit. */
const VERSIONED_TABLES = [
  "dds.load_ledger_dist", "dds.order_dist", "dds.session_dist", "dds.identity_dist",
  "dm.load_ledger_dist", "dm.daily_traffic_dist", "dm.daily_funnel_dist", "dm.daily_revenue_dist", "dm.daily_dq_errors_dist",
  "dm.purchase_vs_orders_dist", "dm.dq_summary_dist",
] as const;

/** Defaults of the dds dates rule: redo the newest event day; a row loaded up to 2 minutes before a build began is "late". */
export const DEFAULT_REDO_DAYS = 1;
export const DEFAULT_LATE_MARGIN_SECONDS = 120;

export interface DateToProcess {
  date: string;
  /** Why the day is due: new_event_date, late_rows, recent, order_changed (dds); dm_behind_dds (dm). */
  reasons: string[];
}

export interface EtlConnectionOptions {
  config?: StandConfig;
  /** Node to run from; the first node when omitted. */
  node?: string;
}

export interface DatesOptions extends EtlConnectionOptions, TaskIo {
  redoDays?: number;
  lateMarginSeconds?: number;
}

export interface TransformInput extends EtlConnectionOptions, TaskIo {
  /** The DAG run id; stored as _load_id on every row the run writes. */
  loadId: string;
  /** Days to build; derived from the data (the dates-to-process query) when omitted. */
  dates?: readonly string[];
  redoDays?: number;
  lateMarginSeconds?: number;
}

export interface TransformReport {
  layer: EtlLayer;
  loadId: string;
  /** The run's _version, as a decimal string (UInt64). */
  version: string;
  dates: string[];
  files: FileReport[];
  /** Files left out because they build per day and the run has no days. */
  skipped: string[];
}

function connectEtl(options: EtlConnectionOptions): StandClickHouse {
  const config = options.config ?? loadStandConfig();
  const node = clickhouseNodeConfig(options.node, config);
  return connectClickHouse({ node: node.name, account: "etl", config, requestTimeoutMs: ETL_REQUEST_TIMEOUT_MS });
}

/** Runs `work` as the etl account on the chosen node (the first by default), with the server's platform. */
export async function withEtl<T>(options: EtlConnectionOptions, work: (clickhouse: StandClickHouse, platform: Platform) => Promise<T>): Promise<T> {
  const clickhouse = connectEtl(options);
  try {
    return await work(clickhouse, await detectPlatform(clickhouse));
  } finally {
    await clickhouse.close();
  }
}

function nonNegativeInteger(value: number, name: string): string {
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${value}`);
  return String(value);
}

async function queryDates(clickhouse: StandClickHouse, platform: Platform, layer: EtlLayer, options: DatesOptions): Promise<DateToProcess[]> {
  const step = `${layer}DatesToProcess`;
  const file = await readSqlFile(path.join(ETL_DIR, DATES_FILE[layer]), step);
  const values = {
    ...runTemplateValues(platform, { version: 0n, loadId: "", startedAt: "1970-01-01 00:00:00", dates: [] }),
    "run.redo_days": nonNegativeInteger(options.redoDays ?? DEFAULT_REDO_DAYS, "redoDays"),
    "run.late_margin_seconds": nonNegativeInteger(options.lateMarginSeconds ?? DEFAULT_LATE_MARGIN_SECONDS, "lateMarginSeconds"),
  };
  const rows = await querySqlFile<{ d: string; reasons: string[] }>({ step, clickhouse, file, values, signal: options.signal });
  return rows.map((r) => ({ date: r.d, reasons: r.reasons }));
}

/** The days dds_transform should build now, with the reasons (sql/etl/00-dds-dates-to-process.sql). */
export async function ddsDatesToProcess(options: DatesOptions): Promise<DateToProcess[]> {
  return withEtl(options, (clickhouse, platform) => queryDates(clickhouse, platform, "dds", options));
}

/** The days dm_transform should build its per-day marts for (sql/etl/01-dm-dates-to-process.sql). */
export async function dmDatesToProcess(options: DatesOptions): Promise<DateToProcess[]> {
  return withEtl(options, (clickhouse, platform) => queryDates(clickhouse, platform, "dm", options));
}

/**
 * The next run version: above every version in any dds/dm table, committed or not (so a failed run's
 * rows never outrank a later run's), and at least now in milliseconds.
 */
export async function nextRunVersion(clickhouse: StandClickHouse): Promise<bigint> {
  const maxima = VERSIONED_TABLES.map((t) => `SELECT max(_version) AS v FROM ${t}`).join(" UNION ALL ");
  const rows = await clickhouse.query<{ v: string }>(`SELECT toString(max(v)) AS v FROM (${maxima})`);
  const highest = BigInt(rows[0]?.v ?? "0");
  const now = BigInt(Date.now());
  return highest >= now ? highest + 1n : now;
}

/** The transform files of a layer, in name order: NN-name.sql. */
export async function listTransformFiles(layer: EtlLayer): Promise<string[]> {
  const entries = await readdir(path.join(ETL_DIR, layer), { withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /^\d{2}-.+\.sql$/.test(e.name))
    .map((e) => e.name)
    .sort();
}

/** Where a transform file takes in the shared commit statement: ledger.commit(target, day_column) in double braces. */
const LEDGER_COMMIT = /\{\{\s*ledger\.commit\((\w+),\s*(\w+)\)\s*\}\}/g;
const LEDGER_COMMIT_FILE = path.join(ETL_DIR, "ledger-commit.fragment.sql");

/** The shared commit statement for one target; the run placeholders in it stay for the run's values. */
function ledgerCommit(fragment: { name: string; body: string }, values: Readonly<Record<string, string>>): string {
  return fragment.body.replace(/\{\{ledger\.(\w+)\}\}/g, (match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${fragment.name}: unknown placeholder ${match}`);
    return value;
  });
}

/** A transform file as it runs: its ledger.commit placeholder replaced by sql/etl/ledger-commit.fragment.sql for its target. */
export async function readTransformFile(layer: EtlLayer, name: string, step: string): Promise<SqlFile> {
  const file = await readSqlFile(path.join(ETL_DIR, layer, name), step);
  if (!file.text.match(LEDGER_COMMIT)) return file;
  const fragment = await readSqlBody(LEDGER_COMMIT_FILE, step);
  const text = file.text.replace(LEDGER_COMMIT, (_match, target: string, dayColumn: string) =>
    ledgerCommit(fragment, { layer, target, day_column: dayColumn }));
  return { name: file.name, text, statements: splitSqlStatements(text) };
}

async function runLayer(layer: EtlLayer, input: TransformInput): Promise<TransformReport> {
  const step = `${layer}Transform`;
  return withEtl(input, async (clickhouse, platform) => {
    // The watermark is taken before anything is read, so rows landing during the run count as late.
    const startedAt = await serverNow(clickhouse);
    const dates = normalizeDates(input.dates ?? (await queryDates(clickhouse, platform, layer, input)).map((d) => d.date));
    const version = await nextRunVersion(clickhouse);
    const values = runTemplateValues(platform, { version, loadId: input.loadId, startedAt, dates });
    const settings = platform.syncDistributedInsertSettings();
    input.log(`${layer}: run ${input.loadId}, version ${version}, days [${dates.join(", ")}], as etl on ${clickhouse.target.node}`);
    const report: TransformReport = { layer, loadId: input.loadId, version: version.toString(), dates, files: [], skipped: [] };
    for (const name of await listTransformFiles(layer)) {
      const file = await readTransformFile(layer, name, step);
      if (dates.length === 0 && (usesPlaceholder(file, "run.date_set") || usesPlaceholder(file, "run.date_array"))) {
        input.log(`  ${file.name}: no days to build, skipped`);
        report.skipped.push(file.name);
        continue;
      }
      report.files.push(await runSqlFile({ step, clickhouse, file, values, settings, signal: input.signal, log: input.log }));
    }
    return report;
  });
}

/** dds_transform: builds dds.order, dds.session, dds.identity for the days (derived when not given). */
export async function runDdsTransform(input: TransformInput): Promise<TransformReport> {
  return runLayer("dds", input);
}

/** dm_transform: per-day marts for the days dm is behind dds, and the whole-history marts. */
export async function runDmTransform(input: TransformInput): Promise<TransformReport> {
  return runLayer("dm", input);
}
