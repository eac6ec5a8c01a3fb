// The splice route: a row's JSONEachRow line is built from the message's own bytes, never from a
// parsed and re-serialised object. The line is `{`, the router's leading fields, then (in
// "json-object" mode) the members of the original object after its `{`, copied byte for byte, so
// numbers keep every digit (a UInt64 beyond 2^53 lands exactly) and nothing is normalised.
//
// A leading field whose value is the very string the router was handed (`_raw: text`) is written
// from the message's bytes by a byte-level JSON string escaper, the same bytes JSON.stringify would
// give at about half its cost. A message member with the same name as a leading field makes the
// server refuse the row (duplicate field, code 117): it becomes a data dead letter through salvage.
import { writeJsonString, jsonStringMaxBytes } from "./json-bytes.ts";
import type { ObjectMembers } from "./decode.ts";
import type { LoaderMessage, LoaderTarget } from "./types.ts";

export type LeadingFieldValue = string | number | bigint | boolean;
export type LeadingFields = Readonly<Record<string, LeadingFieldValue>>;

/** Where a message goes: its target (the router hands out the same object for the same target)
 * and the fields written before the message's own members. */
export interface SpliceRoute {
  target: LoaderTarget;
  fields: LeadingFields;
}

/** Picks a decoded message's target and leading fields; null skips the message (it counts as placed). */
export type SpliceRouter = (message: LoaderMessage, text: string) => SpliceRoute | null;

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
/** Field names seen are kept as ready `"name":` bytes, up to this many (routers use a handful). */
const KEY_CACHE_LIMIT = 256;
const SLAB_BYTES = 1024 * 1024;

/** Where a table's lines are written: a slab and how much of it is used. */
interface Slab {
  bytes: Buffer;
  used: number;
}

/**
 * Writes JSONEachRow lines straight into per-table slabs (1 MiB each), so a line costs no buffer
 * allocation of its own and a slab is freed once every line in it is flushed. Per table, because a
 * table whose rows are held must not pin slabs full of other tables' flushed rows.
 */
export class SpliceLineWriter {
  private readonly slabs = new Map<string, Slab>();
  private readonly keys = new Map<string, Buffer>();
  /** The slab and write position of the line being written. */
  private slab: Slab = { bytes: Buffer.alloc(0), used: 0 };
  private at = 0;

  /**
   * One line for `table`, newline included, as a view of the table's slab. `text` is `value`
   * decoded (the string the router was handed); `members` are the object's members in
   * "json-object" mode, undefined in "text" mode (the line is then the leading fields alone).
   */
  line(table: string, value: Buffer, text: string, members: ObjectMembers | undefined, fields: LeadingFields): Buffer {
    this.slab = this.slabOf(table);
    this.at = this.slab.used;
    this.reserve(1);
    this.slab.bytes[this.at++] = OPEN_BRACE;
    let first = true;
    for (const name in fields) {
      const field = fields[name];
      if (field === undefined) continue;
      if (!first) {
        this.reserve(1);
        this.slab.bytes[this.at++] = COMMA;
      }
      first = false;
      this.writeName(name);
      this.writeValue(name, field, value, text);
    }
    if (members === undefined) {
      this.reserve(2);
      this.slab.bytes[this.at++] = CLOSE_BRACE;
    } else {
      this.reserve(members.end - members.start + 2);
      if (!first && !members.empty) this.slab.bytes[this.at++] = COMMA;
      this.at += value.copy(this.slab.bytes, this.at, members.start, members.end);
    }
    this.slab.bytes[this.at++] = NEWLINE;
    const line = this.slab.bytes.subarray(this.slab.used, this.at);
    this.slab.used = this.at;
    return line;
  }

  private slabOf(table: string): Slab {
    let slab = this.slabs.get(table);
    if (slab === undefined) {
      slab = { bytes: Buffer.alloc(0), used: 0 };
      this.slabs.set(table, slab);
    }
    return slab;
  }

  private writeName(name: string): void {
    let key = this.keys.get(name);
    if (key === undefined) {
      key = Buffer.from(`${JSON.stringify(name)}:`, "utf8");
      if (this.keys.size < KEY_CACHE_LIMIT) this.keys.set(name, key);
    }
    this.reserve(key.length);
    this.at += key.copy(this.slab.bytes, this.at);
  }

  private writeValue(name: string, field: LeadingFieldValue, value: Buffer, text: string): void {
    if (field === text) {
      this.reserve(jsonStringMaxBytes(value));
      this.at = writeJsonString(value, this.slab.bytes, this.at);
      return;
    }
    let json: string;
    if (typeof field === "string") json = JSON.stringify(field);
    else if (typeof field === "number") {
      if (!Number.isFinite(field)) throw new TypeError(`leading field ${name} is ${field}, which JSON cannot carry`);
      json = String(field);
    } else json = String(field); // bigint digits, true, false
    // A UTF-16 unit is at most 3 UTF-8 bytes.
    this.reserve(json.length * 3);
    this.at += this.slab.bytes.write(json, this.at, "utf8");
  }

  /** Makes room for `more` bytes at the write position: a line that does not fit moves, with what
   * is written of it, to a new slab (the old one keeps the lines before it). */
  private reserve(more: number): void {
    const { slab } = this;
    if (this.at + more <= slab.bytes.length) return;
    const written = this.at - slab.used;
    const bytes = Buffer.allocUnsafe(Math.max(SLAB_BYTES, 2 * (written + more)));
    slab.bytes.copy(bytes, 0, slab.used, this.at);
    slab.bytes = bytes;
    slab.used = 0;
    this.at = written;
  }
}
