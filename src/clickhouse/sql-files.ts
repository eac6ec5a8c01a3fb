// Running SQL files (sql/etl/, sql/checks/) on ClickHouse: read a file, split it into statements
// with dbgate-query-splitter (sql-statements.ts), render each statement's {{placeholders}} with the
// one template renderer (sql-template.ts), and run the statements in order on one account's
// connection. Every failure names the file, the statement, the account and the node.
import { readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { StandClickHouse, Settings } from "./client.ts";
import { ClickHouseStatementError } from "./errors.ts";
import { splitSqlStatements, type SqlStatement } from "./sql-statements.ts";
import { SqlTemplateError, renderTemplate, type TemplateValues } from "./sql-template.ts";
import { repoRoot } from "../config/index.ts";
import { StepError, errorMessage } from "../errors.ts";

/** A SQL file could not be read, rendered or run; `step` names the task that was running it. */
export class SqlFileError extends StepError {
  override name = "SqlFileError";
}

function throwIfCancelled(signal: AbortSignal, step: string): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : typeof reason === "string" ? reason : "aborted";
  throw new SqlFileError(step, `cancelled: ${why}`, { cause: reason });
}

/** A statement of a SQL file failed; the message names file, statement, account and node. */
export class SqlStatementError extends SqlFileError {
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
    this.name = "SqlStatementError";
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
    throw new SqlFileError(step, `cannot read ${name}: ${errorMessage(err)}`, { cause: err });
  }
  return { name, text, statements: splitSqlStatements(text) };
}

/** A file's SQL without its `--` comment lines, trimmed: the part another file takes in. */
export async function readSqlBody(filePath: string, step: string): Promise<{ name: string; body: string }> {
  const { text, name } = await readSqlFile(filePath, step);
  const body = text
    .split("\n")
    .filter((line) => !/^\s*--/.test(line))
    .join("\n")
    .trim();
  return { name, body };
}

/** A fragment file (an expression, not a statement) without its leading comment lines. */
export async function readSqlFragment(filePath: string, step: string): Promise<string> {
  const { name, body } = await readSqlBody(filePath, step);
  if (body === "" || body.includes(";")) throw new SqlFileError(step, `${name} must hold exactly one SQL expression`);
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
    if (!(err instanceof SqlTemplateError)) throw err;
    throw new SqlFileError(step, `${err.message}; statement ${statement.number}: ${statement.firstLine}`, { cause: err });
  }
}

function statementError(step: string, file: SqlFile, statement: SqlStatement, clickhouse: StandClickHouse, err: unknown): Error {
  const serverText = err instanceof ClickHouseStatementError ? err.serverText : err instanceof Error ? err.message : String(err);
  const { account, node } = clickhouse.target;
  return new SqlStatementError(step, file.name, statement, account, node, serverText, { cause: err });
}

export interface RunFileInput {
  /** Aborted when the task is cancelled; checked before each statement. */
  signal: AbortSignal;
  /** One line of progress per statement. */
  log: (line: string) => void;
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
    throwIfCancelled(input.signal, step);
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
    throw new SqlFileError(step, `${file.name} must hold exactly one SELECT statement (it has ${file.statements.length})`);
  }
  throwIfCancelled(input.signal, step);
  const sql = render(step, file, statement, input.values);
  try {
    return await clickhouse.query<Row>(sql, input.settings);
  } catch (err) {
    throw statementError(step, file, statement, clickhouse, err);
  }
}

/**
 * A folder of SQL files that a registry in code names one by one (the checks of check-clickhouse,
 * the dq_check DAG's checks): every .sql file there must be registered and every registered name
 * must have its file, so a file added without its entry is an error when the registry is loaded,
 * never a check silently not run. Returns the registered names in their order.
 */
export function registeredSqlFiles<const Name extends string>(dir: string, registered: readonly Name[], what: string): readonly Name[] {
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql"));
  const names = new Set<string>(registered);
  const unregistered = files.filter((f) => !names.has(f.slice(0, -".sql".length)));
  const missing = registered.filter((n) => !files.includes(`${n}.sql`));
  const where = path.relative(repoRoot, dir);
  if (unregistered.length > 0) throw new Error(`${where}: ${unregistered.join(", ")} ${unregistered.length === 1 ? "is" : "are"} not registered as ${what}; add ${unregistered.length === 1 ? "it" : "them"} to the registry or remove the file`);
  if (missing.length > 0) throw new Error(`${where}: ${what} ${missing.join(", ")} ${missing.length === 1 ? "has" : "have"} no .sql file`);
  return registered;
}
