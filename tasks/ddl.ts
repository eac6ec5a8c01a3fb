// Applying the canonical DDL: list sql/ddl/*.sql in name order, and apply one file — render its
// template for the server in front of us, split it into statements, run them in order as
// `lifecycle` from node 1. The DAG runs one task per file, so a red task names the file.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { connectClickHouse, clickhouseNodeConfig, type StandClickHouse, ClickHouseStatementError, detectPlatform, type Platform, SqlTemplateError, renderTemplate, type TemplateValues, splitSqlStatements, type SqlStatement } from "../src/clickhouse/index.ts";
import { loadStandConfig, type StandConfig } from "../src/config/index.ts";
import { DDL_DIR, ddlChecksum, listDdlFiles, readCatalogCsv, worldTemplateValues, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { errorMessage } from "../src/errors.ts";

export { listDdlFiles };

const STEP = "applyDdlFile";
/** ON CLUSTER statements wait for every node (up to the server's 180 s distributed DDL timeout). */
const DDL_REQUEST_TIMEOUT_MS = 300_000;


/** A statement of a DDL file failed; the message names the file, the statement and the server's words. */
export class DdlStatementError extends WorldTaskError {
  constructor(
    readonly file: string,
    readonly statement: SqlStatement,
    readonly serverText: string,
    readonly where: string,
    options?: { cause?: unknown },
  ) {
    super(
      STEP,
      `${file}: statement ${statement.number} (line ${statement.line}) failed ${where}: ${statement.firstLine}\n` +
        `  server said: ${serverText}\n` +
        "  fix the file (or the server state it needs) and rerun this task; statements before it were applied and are re-runnable",
      options,
    );
    this.name = "DdlStatementError";
  }
}

export interface ApplyDdlFileInput extends TaskIo {
  /** A file name in `dir` (e.g. "10-stg-tables.sql") or an absolute path. */
  file: string;
  dir?: string;
  config?: StandConfig;
  /** Template values to use instead of the world's (tests); rendering still goes through renderTemplate. */
  templateValues?: TemplateValues;
}

export interface AppliedDdlFile {
  file: string;
  /**
   * sha256 of the file's text as written (before rendering, so one file has one checksum on every
   * server) and of the data files it inlines (the catalog): what the schema ledger records.
   */
  checksum: string;
  statements: number;
  platformVersion: string;
}

async function templateValuesFor(platform: Platform, config: StandConfig): Promise<TemplateValues> {
  return worldTemplateValues({ platform, config, catalogCsv: await readCatalogCsv() });
}


async function runStatement(clickhouse: StandClickHouse, fileName: string, statement: SqlStatement, sql: string): Promise<void> {
  try {
    await clickhouse.command(sql);
  } catch (err) {
    const serverText = err instanceof ClickHouseStatementError ? err.serverText : err instanceof Error ? err.message : String(err);
    const { account, node } = clickhouse.target;
    throw new DdlStatementError(fileName, statement, serverText, `as ${account} on ${node}`, { cause: err });
  }
}

function renderStatement(statement: SqlStatement, values: TemplateValues, fileName: string): string {
  try {
    return renderTemplate(statement.text, values, fileName, statement.line);
  } catch (err) {
    if (!(err instanceof SqlTemplateError)) throw err;
    throw new WorldTaskError(STEP, `${err.message}; statement ${statement.number}: ${statement.firstLine}`, { cause: err });
  }
}

/** Applies one DDL file; statements run one by one, in file order, and the first failure stops it. */
export async function applyDdlFile(input: ApplyDdlFileInput): Promise<AppliedDdlFile> {
  const config = input.config ?? loadStandConfig();
  const filePath = path.isAbsolute(input.file) ? input.file : path.join(input.dir ?? DDL_DIR, input.file);
  const fileName = path.basename(filePath);
  throwIfAborted(input.signal, STEP);
  let text: string;
  try {
    text = await readFile(filePath, "utf8");
  } catch (err) {
    throw new WorldTaskError(STEP, `${fileName}: cannot read ${filePath}: ${errorMessage(err)}`, { cause: err });
  }
  const statements = splitSqlStatements(text);
  const node = clickhouseNodeConfig(undefined, config);
  const clickhouse = connectClickHouse({ node: node.name, account: "lifecycle", config, requestTimeoutMs: DDL_REQUEST_TIMEOUT_MS });
  try {
    const platform = await detectPlatform(clickhouse);
    const values = input.templateValues ?? (await templateValuesFor(platform, config));
    // every statement renders before the first runs: a template mistake changes nothing on the server
    const rendered = statements.map((statement) => renderStatement(statement, values, fileName));
    input.log(`${fileName}: ${statements.length} statements, as lifecycle on ${node.name} (ClickHouse ${platform.version})`);
    for (const [i, statement] of statements.entries()) {
      throwIfAborted(input.signal, STEP);
      const sql = rendered[i] ?? "";
      const started = Date.now();
      await runStatement(clickhouse, fileName, statement, sql);
      input.log(`  ${statement.number}/${statements.length} (line ${statement.line}) ${statement.firstLine} — ${Date.now() - started} ms`);
    }
    return { file: fileName, checksum: ddlChecksum(text, values), statements: statements.length, platformVersion: platform.version };
  } finally {
    await clickhouse.close();
  }
}
