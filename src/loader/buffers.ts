// Per-table buffers: rows wait here, as the message and the router's fields, until their table is
// due by rows, bytes or age; they are encoded when their batch is flushed (loader-core.ts). Rows a failed flush handed back go to the front, so a table's rows stay in offset order.
// A "table" is the router's target string, opaque here.
import type { RowDoc } from "./row-binary.ts";
import { partitionKey, type MessageSource, type TopicPartition } from "./types.ts";

/** A row for its table: what it is made of, where it came from, and its encodings once made. */
export interface BufferedRow {
  source: MessageSource;
  doc: RowDoc;
  /** What it counts against flush.maxBytes: the message's bytes and its fields'. */
  size: number;
  /** Its JSONEachRow line (UTF-8, its newline included), once built. */
  line?: Buffer;
  /** Its RowBinary bytes, once encoded, and the plan version they follow (table-schema.ts). */
  binary?: Buffer;
  binaryVersion?: number;
}

/** How a batch is known again across flushes: its first row's partition@offset ("" for no rows). */
export function batchHead(rows: readonly BufferedRow[]): string {
  const first = rows[0];
  return first === undefined ? "" : `${partitionKey(first.source)}@${first.source.offset}`;
}

export interface FlushLimits {
  maxRows: number;
  maxBytes: number;
  maxAgeMs: number;
}

interface TableBuffer {
  rows: BufferedRow[];
  bytes: number;
  /** When the oldest row still here was first buffered (ms). */
  since: number;
}

export class BufferManager {
  private readonly tables = new Map<string, TableBuffer>();

  constructor(private limits: FlushLimits) {}

  /** New flush limits (a hot reload): buffered rows are judged by them from the next check on. */
  setLimits(limits: FlushLimits): void {
    this.limits = limits;
  }

  add(table: string, row: BufferedRow, now: number): void {
    let buffer = this.tables.get(table);
    if (buffer === undefined) {
      buffer = { rows: [], bytes: 0, since: now };
      this.tables.set(table, buffer);
    }
    if (buffer.rows.length === 0) buffer.since = now;
    buffer.rows.push(row);
    buffer.bytes += row.size;
  }

  /** Tables whose buffer reached a limit, or every non-empty one when `all`. */
  dueTables(now: number, all = false): string[] {
    const due: string[] = [];
    for (const [table, buffer] of this.tables) {
      if (buffer.rows.length === 0) continue;
      if (all || buffer.rows.length >= this.limits.maxRows || buffer.bytes >= this.limits.maxBytes || now - buffer.since >= this.limits.maxAgeMs) {
        due.push(table);
      }
    }
    return due;
  }

  /** When the next table becomes due by age (ms), or undefined when every buffer is empty. */
  nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const buffer of this.tables.values()) {
      if (buffer.rows.length > 0 && (next === undefined || buffer.since + this.limits.maxAgeMs < next)) next = buffer.since + this.limits.maxAgeMs;
    }
    return next;
  }

  /** Removes and returns up to one batch (maxRows rows, maxBytes bytes, at most `upTo` rows, at least one row) of a table. */
  take(table: string, upTo = Number.POSITIVE_INFINITY): BufferedRow[] {
    const buffer = this.tables.get(table);
    if (buffer === undefined || buffer.rows.length === 0) return [];
    let count = 0;
    let bytes = 0;
    for (const row of buffer.rows) {
      if (count > 0 && (count >= this.limits.maxRows || count >= upTo || bytes + row.size > this.limits.maxBytes)) break;
      count++;
      bytes += row.size;
    }
    const batch = buffer.rows.splice(0, count);
    buffer.bytes -= bytes;
    return batch;
  }

  /** Puts rows a flush could not place back at the front, keeping their original wait time. */
  putBack(table: string, rows: readonly BufferedRow[], since: number): void {
    if (rows.length === 0) return;
    let buffer = this.tables.get(table);
    if (buffer === undefined) {
      buffer = { rows: [], bytes: 0, since };
      this.tables.set(table, buffer);
    }
    buffer.rows = [...rows, ...buffer.rows];
    for (const row of rows) buffer.bytes += row.size;
    buffer.since = Math.min(buffer.since, since);
  }

  /** Drops the rows of revoked partitions; returns how many were dropped. */
  discardPartitions(tps: readonly TopicPartition[]): number {
    const revoked = new Set(tps.map(partitionKey));
    let dropped = 0;
    for (const buffer of this.tables.values()) {
      const kept = buffer.rows.filter((row) => !revoked.has(partitionKey(row.source)));
      dropped += buffer.rows.length - kept.length;
      buffer.rows = kept;
      buffer.bytes = kept.reduce((sum, row) => sum + row.size, 0);
    }
    return dropped;
  }

  /** Buffered rows of one table, or of all. */
  rowCount(table?: string): number {
    if (table !== undefined) return this.tables.get(table)?.rows.length ?? 0;
    let count = 0;
    for (const buffer of this.tables.values()) count += buffer.rows.length;
    return count;
  }

  byteCount(): number {
    let bytes = 0;
    for (const buffer of this.tables.values()) bytes += buffer.bytes;
    return bytes;
  }
}
