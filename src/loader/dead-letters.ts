// Dead letters: what the loader could not make a row of, with enough to find and replay it (topic,
// partition, offset, key, the raw bytes capped, reason code, time). Written to a ClickHouse table as
// TabSeparated bytes. A dead letter is placed once that INSERT succeeds; when the table refuses a
// letter for its data (it never should: every field is a String or a number we produce), the letter
// is dropped and counted by reason rather than holding its partition for ever.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ClickHouseClient } from "@clickhouse/client";
import { quoteIdentifier, splitSqlStatements } from "../clickhouse/index.ts";
import { DDL_DIR } from "../world/index.ts";
import { escapeTsvBytes, insertTsv } from "./clickhouse-sink.ts";
import type { MessageSource } from "./types.ts";

export interface DeadLetter {
  source: MessageSource;
  /** An undecodable reason (decode.ts UNDECODABLE_REASONS: too_large … number_too_long), kills_server, or a data rejection's name (rejections.ts). */
  reason: string;
  /** The server's exception code for a rejected row; undefined for undecodable messages. */
  errorCode: number | undefined;
  /** What went wrong, capped. */
  errorText: string;
  /** The table the row was meant for ("" when the message never became a row). */
  targetTable: string;
  deadAt: Date;
}

export interface DeadLetterSink {
  write(letters: readonly DeadLetter[]): Promise<void>;
}

/** Where the world's dead-letter table is defined: its columns are the one definition of a dead letter. */
const WORLD_DDL_FILE = path.join(DDL_DIR, "10-stg-tables.sql");
const WORLD_STATEMENT = /^CREATE TABLE IF NOT EXISTS stg\.dead_letters ON CLUSTER /;

/** The column list, parentheses included, of stg.dead_letters in sql/ddl/10-stg-tables.sql. */
function worldDeadLetterColumns(): string {
  const statement = splitSqlStatements(readFileSync(WORLD_DDL_FILE, "utf8")).find((s) => WORLD_STATEMENT.test(s.firstLine));
  const open = statement?.text.indexOf("\n(") ?? -1;
  const close = statement?.text.indexOf("\n)", open) ?? -1;
  if (statement === undefined || open < 0 || close < 0) {
    throw new Error(`${WORLD_DDL_FILE}: no CREATE TABLE stg.dead_letters statement with its columns between lines "(" and ")"; the loader's dead-letter tables are made from it`);
  }
  return statement.text.slice(open + 1, close + 2);
}

/**
 * A dead-letter table of the world's columns elsewhere (tests, benchmarks: their own database, one
 * node); `engine` defaults to a plain MergeTree in the world table's order.
 */
export function deadLetterTableDdl(qualifiedTable: string, engine = "ENGINE = MergeTree PARTITION BY toYYYYMM(dead_at) ORDER BY (topic, partition, offset, dead_at)"): string {
  return `CREATE TABLE IF NOT EXISTS ${qualifiedTable}\n${worldDeadLetterColumns()}\n${engine}`;
}

export const DEAD_LETTER_COLUMNS = [
  "dead_at", "topic", "partition", "offset", "key", "raw", "raw_bytes", "reason", "error_code", "error_text", "target_table",
] as const;

function tsvText(text: string): Buffer {
  return escapeTsvBytes(Buffer.from(text, "utf8"));
}

function utcDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace("T", " ");
}

const TAB = Buffer.from("\t");
const NEWLINE = Buffer.from("\n");
const NULL_FIELD = Buffer.from("\\N");

/** One dead letter as a TabSeparated line, bytes kept exact. */
export function deadLetterTsvLine(letter: DeadLetter): Buffer {
  const { source } = letter;
  const fields: Buffer[] = [
    Buffer.from(utcDateTime(letter.deadAt)),
    tsvText(source.topic),
    Buffer.from(String(source.partition)),
    Buffer.from(source.offset.toString()),
    source.key === null ? NULL_FIELD : escapeTsvBytes(source.key),
    escapeTsvBytes(source.raw),
    Buffer.from(String(source.rawBytes)),
    tsvText(letter.reason),
    letter.errorCode === undefined ? NULL_FIELD : Buffer.from(String(letter.errorCode)),
    tsvText(letter.errorText),
    tsvText(letter.targetTable),
  ];
  const parts: Buffer[] = [];
  fields.forEach((field, i) => parts.push(i === 0 ? field : Buffer.concat([TAB, field])));
  parts.push(NEWLINE);
  return Buffer.concat(parts);
}

export class ClickHouseDeadLetterSink implements DeadLetterSink {
  /** `table` is already qualified and quoted (qualifiedTable). */
  constructor(
    private readonly client: ClickHouseClient,
    private readonly table: string,
  ) {}

  async write(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    const body = Buffer.concat(letters.map(deadLetterTsvLine));
    await insertTsv(this.client, this.table, DEAD_LETTER_COLUMNS.map(quoteIdentifier), body);
  }
}
