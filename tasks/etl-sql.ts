// Running the ETL's own SQL files (sql/etl/, sql/checks/): read a file, split it into statements
// with dbgate-query-splitter (src/world/sql-statements.ts), render each statement's {{placeholders}}
// with the one template renderer the DDL uses, and run the statements in order on one account's
// connection. Every failure names the file, the statement, the account and the node.
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { StandClickHouse, Settings } from "../src/clickhouse/client.ts";
import { ClickHouseStatementError } from "../src/clickhouse/errors.ts";
import type { Platform } from "../src/clickhouse/platform.ts";
import { quoteString } from "../src/clickhouse/sql.ts";
import { repoRoot } from "../src/config/stand.ts";
import { DdlTemplateError, renderTemplate, type TemplateValues } from "../src/world/ddl-template.ts";
import { throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/io.ts";
import { splitSqlStatements, type SqlStatement } from "../src/world/sql-statements.ts";

export const ETL_DIR = path.join(repoRoot, "sql", "etl");
export const CHECKS_DIR = path.join(repoRoot, "sql", "checks");

/** ETL statements write through Distributed tables and read back what they wrote, so they wait for the shards. */
export const ETL_REQUEST_TIMEOUT_MS = 300_000;

/** A statement of an ETL or check file failed; the message names file, statement, account and node. */
export class EtlStatementError extends WorldTaskError {
  constructor(
    step: string,
    readonly file: string,
    readonly statement: SqlStatement,
    readonly account: string,
    readonly node: string,
    readonly serverText: string,
    options?: { cause?: unknown },
  ) {
    super(
      step,
      `${file}: statement ${statement.number} (line ${statement.line}) failed as account ${account} on node ${node}: ${statement.firstLine}\n` +
        `  server said: ${serverText}`,
      options,
    );
    this.name = "EtlStatementError";
  }
}

export interface SqlFile {
  /** Path relative to the repository (what errors and logs show). */
  name: string;
  text: string;
  statements: SqlStatement[];
}

export async function readSqlFile(filePath: string, step: string): Promise<SqlFile> {
  const name = path.relative(repoRoot, filePath);
  let text: string;
  try {
    text = await readFile(filePath, "utf8");
  } catch (err) {
    throw new WorldTaskError(step, `cannot read ${name}: ${(err as Error).message}`, { cause: err });
  }
  return { name, text, statements: splitSqlStatements(text) };
}

/** A fragment file (an expression, not a statement) without its leading comment lines. */
export async function readSqlFragment(filePath: string, step: string): Promise<string> {
  const { text, name } = await readSqlFile(filePath, step);
  const body = text
    .split("\n")
    .filter((line) => !/^\s*--/.test(line))
    .join("\n")
    .trim();
  if (body === "" || body.includes(";")) throw new WorldTaskError(step, `${name} must hold exactly one SQL expression`);
  return `(${body})`;
}

/** Placeholders a file uses: a file needing days is skipped when a run has none. */
export function usesPlaceholder(file: SqlFile, name: string): boolean {
  return file.text.includes(`{{${name}}}`);
}

function render(step: string, file: SqlFile, statement: SqlStatement, values: TemplateValues): string {
  try {
    return renderTemplate(statement.text, values, file.name, statement.line);
  } catch (err) {
    if (!(err instanceof DdlTemplateError)) throw err;
    throw new WorldTaskError(step, `${err.message}; statement ${statement.number}: ${statement.firstLine}`, { cause: err });
  }
}

function statementError(step: string, file: SqlFile, statement: SqlStatement, clickhouse: StandClickHouse, err: unknown): Error {
  const serverText = err instanceof ClickHouseStatementError ? err.serverText : err instanceof Error ? err.message : String(err);
  const { account, node } = clickhouse.target;
  return new EtlStatementError(step, file.name, statement, account, node, serverText, { cause: err });
}

export interface RunFileInput extends TaskIo {
  step: string;
  clickhouse: StandClickHouse;
  file: SqlFile;
  values: TemplateValues;
  settings?: Settings;
}

export interface FileReport {
  file: string;
  statements: number;
  ms: number;
}

/** Runs every statement of a file in order; the first failure stops the file (and the task). */
export async function runSqlFile(input: RunFileInput): Promise<FileReport> {
  const { step, clickhouse, file } = input;
  const started = Date.now();
  for (const statement of file.statements) {
    throwIfAborted(input.signal, step);
    const sql = render(step, file, statement, input.values);
    const t0 = Date.now();
    try {
      await clickhouse.command(sql, input.settings);
    } catch (err) {
      throw statementError(step, file, statement, clickhouse, err);
    }
    input.log(`  ${file.name} ${statement.number}/${file.statements.length} (line ${statement.line}) ${statement.firstLine} — ${Date.now() - t0} ms`);
  }
  return { file: file.name, statements: file.statements.length, ms: Date.now() - started };
}

/** Runs a file that holds exactly one SELECT and returns its rows. */
export async function querySqlFile<Row>(input: Omit<RunFileInput, "log">): Promise<Row[]> {
  const { step, clickhouse, file } = input;
  const [statement, ...rest] = file.statements;
  if (!statement || rest.length > 0) {
    throw new WorldTaskError(step, `${file.name} must hold exactly one SELECT statement (it has ${file.statements.length})`);
  }
  throwIfAborted(input.signal, step);
  const sql = render(step, file, statement, input.values);
  try {
    return await clickhouse.query<Row>(sql, input.settings);
  } catch (err) {
    throw statementError(step, file, statement, clickhouse, err);
  }
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Checks and sorts run days (YYYY-MM-DD), without repeats. */
export function normalizeDates(dates: readonly string[]): string[] {
  for (const d of dates) {
    if (!ISO_DATE.test(d) || Number.isNaN(Date.parse(`${d}T00:00:00Z`))) throw new Error(`not a date YYYY-MM-DD: '${d}'`);
  }
  return [...new Set(dates)].sort();
}

/** What identifies one ETL run inside the SQL: its version, load id, start instant and days. */
export interface RunIdentity {
  version: bigint;
  loadId: string;
  /** The server's now() when the run began reading, 'YYYY-MM-DD HH:MM:SS' in UTC. */
  startedAt: string;
  dates: readonly string[];
}

/** Placeholder values every ETL file may use; the day placeholders exist only when the run has days. */
export function runTemplateValues(platform: Platform, run: RunIdentity): Record<string, string> {
  const values: Record<string, string> = {
    "run.version": run.version.toString(),
    "run.load_id": quoteString(run.loadId),
    "run.started_at": `toDateTime(${quoteString(run.startedAt)}, 'UTC')`,
    "platform.instant_now": platform.instantNow,
    "platform.kafka_partition": platform.kafkaPartitionExpression,
    "platform.kafka_offset": platform.kafkaOffsetExpression,
  };
  const dates = normalizeDates(run.dates);
  if (dates.length > 0) {
    // Strings in the IN set are converted to the column's Date type, and keep partition pruning.
    values["run.date_set"] = `(${dates.map(quoteString).join(", ")})`;
    values["run.date_array"] = `[${dates.map((d) => `toDate(${quoteString(d)})`).join(", ")}]`;
  }
  return values;
}

/** The server's clock, as the run's start instant (compared with _load_ts the servers stamped). */
export async function serverNow(clickhouse: StandClickHouse): Promise<string> {
  const rows = await clickhouse.query<{ now: string }>("SELECT formatDateTime(now(), '%Y-%m-%d %H:%M:%S', 'UTC') AS now");
  const now = rows[0]?.now;
  if (!now) throw new Error(`ClickHouse node ${clickhouse.target.node} returned no now()`);
  return now;
}
