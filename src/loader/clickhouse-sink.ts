// The loader's two writes to ClickHouse over @clickhouse/client: a batch of JSONEachRow lines into a
// table, and dead letters into the dead-letter table as TabSeparated bytes (a raw value need not be
// UTF-8, and TSV escaping is byte-wise, so the bytes land exactly). Both send a body we serialised
// ourselves (exec with a byte stream: the client's insert() would encode JSON objects again, and
// its JSON.stringify cannot write a bigint).
import { Readable } from "node:stream";
import type { ClickHouseClient, ClickHouseSettings } from "@clickhouse/client";
import { quoteIdentifier } from "../clickhouse/index.ts";
import type { LoaderTarget } from "./types.ts";
import { splitTableName, type ColumnRow } from "./table-schema.ts";

/** Where rows go: one INSERT per call, all or nothing (a batch below max_insert_block_size is one block). */
export interface RowInserter {
  /** Each line is one JSONEachRow row, UTF-8, ending with its newline (jsonEachRowBody joins them). */
  insertLines(target: LoaderTarget, lines: readonly Buffer[]): Promise<void>;
  /** Each row is one RowBinary row of `columnList` (quoted names, comma-separated). An inserter
   * without it sends every row JSONEachRow. */
  insertRowBinary?(target: LoaderTarget, columnList: string, rows: readonly Buffer[]): Promise<void>;
  /** The target's columns as system.columns lists them on its node (none: the table is not there). */
  readColumns?(target: LoaderTarget): Promise<ColumnRow[]>;
  /** Whether its INSERTs skip fields the table lacks (input_format_skip_unknown_fields = 1). */
  readonly skipsUnknownFields?: boolean;
  /** Whether the target's node answers a ping within `timeoutMs` (after an INSERT lost its
   * connection: did the node die?). An inserter without it is never thought dead. */
  nodeAnswers?(target: LoaderTarget, timeoutMs: number): Promise<boolean>;
}

/**
 * The INSERT body of rows (JSONEachRow lines that carry their newlines, or RowBinary rows), as few chunks as the rows allow:
 * lines written one after another into the same memory (the splice writer's slabs, which never
 * rewrite a written line) become one view of it, so a 20,000-row batch is sent as a handful of
 * chunks with no copy, where concatenating it copied every line.
 */
export function jsonEachRowChunks(lines: readonly Buffer[]): Buffer[] {
  const chunks: Buffer[] = [];
  // the run being joined: its first line, and where its bytes end (one view is made per run)
  let first: Buffer | undefined;
  let end = 0;
  const close = (run: Buffer) => chunks.push(end === run.byteOffset + run.length ? run : Buffer.from(run.buffer, run.byteOffset, end - run.byteOffset));
  for (const line of lines) {
    if (first !== undefined && first.buffer === line.buffer && end === line.byteOffset) {
      end += line.length;
      continue;
    }
    if (first !== undefined) close(first);
    first = line;
    end = line.byteOffset + line.length;
  }
  if (first !== undefined) close(first);
  return chunks;
}

/** A table name as `db.table`, each part quoted. */
export function qualifiedTable(database: string, table: string): string {
  return `${quoteIdentifier(database)}.${quoteIdentifier(table)}`;
}

// Strict parsing whatever the server's profile says: a bad value must fail its INSERT, not land as a
// default, so salvage can find it. 18.16 has both settings (system.settings, probed on the stand).
const STRICT_INPUT: ClickHouseSettings = { input_format_allow_errors_num: "0", input_format_allow_errors_ratio: 0 };

export class ClickHouseRowInserter implements RowInserter {
  readonly skipsUnknownFields: boolean;

  constructor(
    private readonly client: ClickHouseClient,
    private readonly settings: ClickHouseSettings = {},
  ) {
    const skip = settings.input_format_skip_unknown_fields;
    this.skipsUnknownFields = skip === 1;
  }

  /** Inserts into the target's table on this inserter's node; the table is already qualified and quoted (qualifiedTable). */
  async insertLines(target: LoaderTarget, lines: readonly Buffer[]): Promise<void> {
    await execInsert(this.client, `INSERT INTO ${target.table} FORMAT JSONEachRow`, jsonEachRowChunks(lines), { ...STRICT_INPUT, ...this.settings });
  }

  async insertRowBinary(target: LoaderTarget, columnList: string, rows: readonly Buffer[]): Promise<void> {
    await execInsert(this.client, `INSERT INTO ${target.table} (${columnList}) FORMAT RowBinary`, jsonEachRowChunks(rows), this.settings);
  }

  async readColumns(target: LoaderTarget): Promise<ColumnRow[]> {
    const { database, name } = splitTableName(target.table);
    const literal = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
    // system.columns lists a table's columns in their order (18.16 has no position column to sort by)
    const result = await this.client.query({
      query: `SELECT name, type, default_kind, default_expression, comment FROM system.columns WHERE database = ${literal(database)} AND table = ${literal(name)}`,
      format: "JSONEachRow",
    });
    return result.json<ColumnRow>();
  }

  async nodeAnswers(_target: LoaderTarget, timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    try {
      return await Promise.race([this.client.ping().then((r) => r.success), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Runs `INSERT … FORMAT …` with a prebuilt body; resolves once the server accepted all of it. */
async function execInsert(client: ClickHouseClient, query: string, body: readonly Buffer[], settings: ClickHouseSettings): Promise<void> {
  const result = await client.exec({ query, values: Readable.from(body, { objectMode: false }), clickhouse_settings: settings });
  // The answer to an INSERT is empty; read it to the end so the socket goes back to the pool.
  for await (const _chunk of result.stream) {
    // nothing to read
  }
}

/** TabSeparated escaping of raw bytes: backslash, tab, newline, carriage return and NUL. */
export function escapeTsvBytes(bytes: Buffer): Buffer {
  let extra = 0;
  for (const b of bytes) if (b === 0x5c || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x00) extra++;
  if (extra === 0) return bytes;
  const out = Buffer.allocUnsafe(bytes.length + extra);
  let j = 0;
  for (const b of bytes) {
    if (b === 0x5c || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x00) {
      out[j++] = 0x5c;
      out[j++] = b === 0x5c ? 0x5c : b === 0x09 ? 0x74 : b === 0x0a ? 0x6e : b === 0x0d ? 0x72 : 0x30;
    } else {
      out[j++] = b;
    }
  }
  return out;
}

/** Sends a prebuilt TabSeparated body into `table` (qualified and quoted) with its (quoted) columns. */
export async function insertTsv(client: ClickHouseClient, table: string, columns: readonly string[], body: Buffer): Promise<void> {
  if (columns.length === 0) throw new Error("insertTsv needs at least one column");
  await execInsert(client, `INSERT INTO ${table} (${columns.join(", ")}) FORMAT TabSeparated`, [body], STRICT_INPUT);
}
