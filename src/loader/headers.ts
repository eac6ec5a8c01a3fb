// Kafka headers promoted to columns: the consumer's one view of a record's headers (kafkajs hands
// out a Buffer, a string, an array for a repeated name, or nothing), and the leading string fields
// a table's declared headers become (loader.options.tables["db.table"].headers: header → column).
import { isUtf8 } from "node:buffer";
import type { IHeaders } from "kafkajs";
import type { LoaderConfig } from "../config/index.ts";
import type { LeadingFieldValue } from "./splice.ts";

export type MessageHeaders = ReadonlyMap<string, Buffer>;

/** One declared header of a table: the header's name and the column its value lands in. */
export interface HeaderColumn {
  readonly header: string;
  readonly column: string;
}

/** A declared header whose column is one the router writes itself: it is never promoted. */
export interface HeaderClash extends HeaderColumn {
  readonly table: string;
}

/**
 * kafkajs's headers of one record as name → Buffer: a string is taken as UTF-8, a repeated name
 * keeps its last value (as the Java client's lastHeader), a header without a value (null or
 * undefined) is left out. Undefined when no header has a value, so a record without headers costs
 * no map. Values are kept as sent, valid UTF-8 or not (headerFields decides what a column takes).
 */
export function normaliseHeaders(raw: IHeaders | undefined): MessageHeaders | undefined {
  if (raw === undefined || raw === null) return undefined;
  let headers: Map<string, Buffer> | undefined;
  // for…in, not Object.keys: kafkajs hands every record an object, most of them empty, on the hot path
  for (const name in raw) {
    if (!Object.hasOwn(raw, name)) continue;
    const value = lastValue(raw[name]);
    if (value !== undefined) (headers ??= new Map()).set(name, value);
  }
  return headers;
}

function lastValue(value: unknown): Buffer | undefined {
  if (!Array.isArray(value)) return oneValue(value);
  for (let i = value.length - 1; i >= 0; i--) {
    const one = oneValue(value[i]);
    if (one !== undefined) return one;
  }
  return undefined;
}

function oneValue(value: unknown): Buffer | undefined {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === "string") return Buffer.from(value, "utf8");
  return undefined;
}

/**
 * The headers `table` declares in `config`, minus those whose column is one of `reserved` (the
 * router's own fields: a header must not replace `_raw` or an offset). Both lists in declaration order.
 */
export function declaredHeaders(config: LoaderConfig, table: string, reserved: readonly string[]): { columns: HeaderColumn[]; clashes: HeaderClash[] } {
  const declared = config.tables[table]?.headers ?? {};
  const columns: HeaderColumn[] = [];
  const clashes: HeaderClash[] = [];
  for (const [header, column] of Object.entries(declared)) {
    if (reserved.includes(column)) clashes.push({ table, header, column });
    else columns.push({ header, column });
  }
  return { columns, clashes };
}

/**
 * Adds to `fields` each declared header the message carries, as a string named by its column. A
 * header absent adds nothing (the column takes its default); a value that is not valid UTF-8 adds
 * nothing either and is told to `skipped` (a column of text cannot hold it, and the row must not be
 * lost for a header).
 */
export function addHeaderFields(fields: Record<string, LeadingFieldValue>, headers: MessageHeaders | undefined, columns: readonly HeaderColumn[], skipped: (header: string) => void): void {
  if (headers === undefined) return;
  for (const { header, column } of columns) {
    const value = headers.get(header);
    if (value === undefined) continue;
    if (!isUtf8(value)) {
      skipped(header);
      continue;
    }
    fields[column] = value.toString("utf8");
  }
}
