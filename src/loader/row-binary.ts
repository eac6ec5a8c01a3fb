// The dynamic insert's encoder: a buffered row (the message's bytes, the router's leading fields)
// written as one RowBinary row of a table's columns, read from system.columns at run time
// (table-schema.ts), in one pass over the message's top-level members without building an object.
//
// The encoder writes only what every ClickHouse reads exactly as it would have read the JSON:
//   numbers     an integer literal below 2^53 (for an integer column: in the column's range), or a
//               decimal of at most 15 significant digits and an exponent within ±22 (Clinger's fast
//               path: one correctly rounded operation, the value every parser gives);
//   strings     a JSON string, its bytes copied (escapes decoded; a string that decodes to a lone
//               surrogate is left to the server);
//   arrays      of those; null into a Nullable column.
// Any other value (a quoted number in a Float64 column, null in a non-Nullable one, an object, a
// boolean, a date written as text, a duplicate field) makes the row a JSONEachRow row: it goes in
// the same flush as a separate INSERT, so ClickHouse's own parser gives it the verdict it always
// gave (a row, or a refusal salvage turns into a dead letter with the server's code). A field the
// table lacks is skipped, as input_format_skip_unknown_fields does.
//
// A leading field whose value is the very text the router was handed (`_raw: text`) is written
// from the message's bytes: RowBinary needs no escaping, so `_raw` is the message byte for byte.
import type { ObjectMembers } from "./decode.ts";
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, DOT, jsonValueEnd, MINUS, NINE, numberEnd, OPEN_BRACKET, PLUS, QUOTE, skipJsonWhitespace, stringEnd, ZERO } from "./json-bytes.ts";
import { defaultBytes, varintLength, writeNumberText, writeVarint, type IntKind, type ParsedType } from "./ch-types.ts";
import type { LeadingFields, LeadingFieldValue } from "./splice.ts";

/** What a buffered row is made of: encoded when its batch is flushed, again after a schema change. */
export interface RowDoc {
  value: Buffer;
  /** `value` decoded (the string the router was handed). */
  text: string;
  /** The object's members ("json-object" mode); undefined in "text" mode. */
  members: ObjectMembers | undefined;
  fields: LeadingFields;
}

/** A column the INSERT lists: written from a leading field, a member, or its fill (a default). */
export interface EncodedColumn {
  name: string;
  type: ParsedType;
  /** The bytes of its value when the row has none: the type's default or the column's constant DEFAULT. */
  fill: Buffer;
}

export interface EncoderPlan {
  /** The columns the INSERT lists, in order. */
  columns: readonly EncodedColumn[];
  /** Columns left to the server (a type the encoder does not write, a DEFAULT it cannot evaluate):
   * a row that carries one of them goes JSONEachRow. */
  serverColumns: ReadonlySet<string>;
  /** Leading fields the capture mode does not store (e.g. `_raw` outside raw_only). */
  droppedFields: ReadonlySet<string>;
  /** Whether the INSERT skips fields the table lacks (input_format_skip_unknown_fields); when it
   * does not, a row with such a field goes JSONEachRow and the server refuses it (117). */
  skipUnknownFields: boolean;
}

const LOWER_N = 0x6e;
const CHUNK_BYTES = 1024 * 1024;
const TWO_POW_53 = 2 ** 53;
const SURROGATE = /[\uD800-\uDFFF]/;
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Each integer type's range, within the safe integers. */
const SAFE_RANGES: Record<IntKind, [number, number]> = {
  Int8: [-128, 127],
  Int16: [-32768, 32767],
  Int32: [-2147483648, 2147483647],
  Int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  UInt8: [0, 255],
  UInt16: [0, 65535],
  UInt32: [0, 4294967295],
  UInt64: [0, Number.MAX_SAFE_INTEGER],
};

/** Strings up to this long are copied byte by byte. */
const SHORT_COPY = 48;

/**
 * Past the JSON value at `from` (decode.ts checked the whole value already): strings, numbers and
 * literals by their own end, empty arrays at once, other containers by the full scanner.
 */
function memberValueEnd(bytes: Buffer, from: number): number {
  const c = bytes[from];
  if (c === QUOTE) return stringEnd(bytes, from + 1);
  if (c === MINUS || (c !== undefined && c >= ZERO && c <= NINE)) return numberEnd(bytes, from);
  if (c === OPEN_BRACKET) {
    const next = skipJsonWhitespace(bytes, from + 1);
    if (bytes[next] === CLOSE_BRACKET) return next + 1;
  }
  return jsonValueEnd(bytes, from);
}

/** A row that cannot be written exactly: thrown inside the encoder, caught per row. */
class NotExact extends Error {
  /** One instance, made once: thrown per awkward row, it costs no stack capture. */
  static readonly instance = new NotExact("a value only the server's parser can judge (the row goes JSONEachRow)");
}

/**
 * The value of a JSON number at bytes[from, to) when every parser reads it the same, else
 * undefined; `integer` reports whether it was written without point or exponent.
 */
function exactNumber(bytes: Buffer, from: number, to: number): { value: number; integer: boolean } | undefined {
  let i = from;
  const negative = bytes[i] === MINUS;
  if (negative) i++;
  let mantissa = 0;
  let significant = 0;
  let fractionDigits = 0;
  let integer = true;
  for (; i < to; i++) {
    const c = bytes[i] as number;
    if (c < ZERO || c > NINE) break;
    mantissa = mantissa * 10 + (c - ZERO);
    if (mantissa > 0) significant++;
  }
  if (i < to && bytes[i] === DOT) {
    integer = false;
    for (i++; i < to; i++) {
      const c = bytes[i] as number;
      if (c < ZERO || c > NINE) break;
      mantissa = mantissa * 10 + (c - ZERO);
      if (mantissa > 0) significant++;
      fractionDigits++;
    }
  }
  let exponent = -fractionDigits;
  if (i < to) {
    // an exponent: e[+-]digits
    integer = false;
    i++;
    let sign = 1;
    if (bytes[i] === MINUS) {
      sign = -1;
      i++;
    } else if (bytes[i] === PLUS) i++;
    let e = 0;
    for (; i < to; i++) e = e * 10 + ((bytes[i] as number) - ZERO);
    if (e > 1000) return undefined;
    exponent += sign * e;
  }
  if (integer) {
    // every intermediate value is below the final one: exact while the final one is
    if (mantissa >= TWO_POW_53) return undefined;
    return { value: negative ? -mantissa : mantissa, integer };
  }
  if (significant > 15 || mantissa >= 1e15 || exponent > 22 || exponent < -22) return undefined;
  const magnitude = exponent < 0 ? mantissa / (POW10[-exponent] as number) : mantissa * (POW10[exponent] as number);
  return { value: negative ? -magnitude : magnitude, integer };
}

/**
 * Writes RowBinary rows into 1 MiB chunks; each row is a view of its chunk, so a batch's rows
 * written one after another are sent as a handful of chunks (jsonEachRowChunks joins views).
 */
export class RowBinaryEncoder {
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private at = 0;
  private rowStart = 0;
  /** The column index a message's j-th member named last time (messages of a topic share an order). */
  private predicted: number[] = [];
  private readonly index = new Map<string, number>();
  private readonly names: Buffer[];
  private readonly slots: Int32Array;
  /** The leading field of each column in the row being written (undefined: none). */
  private readonly fieldValues: (LeadingFieldValue | undefined)[];
  private readonly touched: number[] = [];

  constructor(readonly plan: EncoderPlan) {
    this.names = plan.columns.map((c) => Buffer.from(c.name, "utf8"));
    plan.columns.forEach((c, k) => this.index.set(c.name, k));
    this.slots = new Int32Array(plan.columns.length * 2);
    this.fieldValues = plan.columns.map(() => undefined);
  }

  /** The row's RowBinary bytes, or undefined when it must go JSONEachRow (see the head of this file). */
  encode(doc: RowDoc): Buffer | undefined {
    this.rowStart = this.at;
    try {
      this.write(doc);
    } catch (err) {
      this.at = this.rowStart;
      if (err === NotExact.instance) return undefined;
      throw err;
    }
    return this.chunk.subarray(this.rowStart, this.at);
  }

  private write(doc: RowDoc): void {
    const { columns, serverColumns, droppedFields, skipUnknownFields } = this.plan;
    const { fields, value } = doc;
    const fieldValues = this.fieldValues;
    const touched = this.touched;
    touched.length = 0;
    try {
      for (const name in fields) {
        const field = fields[name];
        if (field === undefined || droppedFields.has(name)) continue;
        const k = this.index.get(name);
        if (k === undefined) {
          // a leading field the table lacks: skipped like an unknown member, or the server's refusal
          if (serverColumns.has(name) || !skipUnknownFields) throw NotExact.instance;
          continue;
        }
        fieldValues[k] = field;
        touched.push(k);
      }
      const slots = this.slots;
      slots.fill(-1);
      if (doc.members !== undefined) this.findMembers(value, doc.members);
      for (let k = 0; k < columns.length; k++) {
        const column = columns[k] as EncodedColumn;
        const field = fieldValues[k];
        if (field !== undefined) {
          this.writeField(column.type, field, doc);
          continue;
        }
        const start = slots[2 * k] as number;
        if (start < 0) {
          const fill = column.fill;
          this.reserve(fill.length);
          if (fill.length === 1) this.chunk[this.at++] = fill[0] as number;
          else this.at += fill.copy(this.chunk, this.at);
        } else {
          this.writeValue(column.type, value, start, slots[2 * k + 1] as number);
        }
      }
    } finally {
      for (const k of touched) fieldValues[k] = undefined;
    }
  }

  /** Records where each column's member value lies; a member the table lacks is skipped. */
  private findMembers(bytes: Buffer, members: ObjectMembers): void {
    if (members.empty) return;
    let i = members.start;
    const end = members.end;
    let j = 0;
    while (i < end) {
      // i is at a key's opening quote
      const keyStart = i + 1;
      const keyEnd = stringEnd(bytes, keyStart); // past the closing quote
      const k = this.columnOf(bytes, keyStart, keyEnd - 1, j);
      i = skipJsonWhitespace(bytes, keyEnd);
      if (bytes[i] !== COLON) throw new Error("row-binary: a member without ':' in a value decode.ts accepted");
      const valueStart = skipJsonWhitespace(bytes, i + 1);
      const valueEnd = memberValueEnd(bytes, valueStart);
      if (valueEnd < 0) throw new Error("row-binary: a member value decode.ts accepted does not parse");
      // a key with escapes (the server reads it as the name it decodes to), or a column the server
      // fills carried by the row: the server's verdict
      if (k === -2 || k === -3 || (k === -1 && !this.plan.skipUnknownFields)) throw NotExact.instance;
      if (k >= 0) {
        // a field twice, or a member that is also a leading field: the server refuses the row (117)
        if (this.slots[2 * k] !== -1 || this.fieldValues[k] !== undefined) throw NotExact.instance;
        this.slots[2 * k] = valueStart;
        this.slots[2 * k + 1] = valueEnd;
      }
      i = skipJsonWhitespace(bytes, valueEnd);
      if (bytes[i] === COMMA) i = skipJsonWhitespace(bytes, i + 1);
      else if (bytes[i] === CLOSE_BRACE) break;
      j++;
    }
  }

  /**
   * The column of the key at bytes[from, to) (its position j in the message): -1 for a field the
   * table lacks, -2 for a key with escapes, -3 for a column left to the server.
   */
  private columnOf(bytes: Buffer, from: number, to: number, j: number): number {
    const guess = this.predicted[j];
    if (guess !== undefined && guess >= 0) {
      const name = this.names[guess] as Buffer;
      if (name.length === to - from) {
        let p = 0;
        while (p < name.length && name[p] === bytes[from + p]) p++;
        if (p === name.length) return guess;
      }
    }
    for (let p = from; p < to; p++) if (bytes[p] === BACKSLASH) return -2;
    const key = bytes.toString("utf8", from, to);
    const k = this.index.get(key) ?? (this.plan.serverColumns.has(key) ? -3 : -1);
    this.predicted[j] = k;
    return k;
  }

  private reserve(n: number): void {
    if (this.at + n <= this.chunk.length) return;
    // the row so far moves to a fresh chunk (earlier rows stay views of the old one)
    const partial = this.chunk.subarray(this.rowStart, this.at);
    const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, 2 * (partial.length + n)));
    partial.copy(next, 0);
    this.chunk = next;
    this.at = partial.length;
    this.rowStart = 0;
  }

  private writeBytes(bytes: Buffer, from: number, to: number): void {
    const length = to - from;
    this.reserve(5 + length);
    const chunk = this.chunk;
    if (length < 0x80) chunk[this.at++] = length;
    else this.at = writeVarint(chunk, this.at, length);
    if (length <= SHORT_COPY) {
      // a short string: a loop beats the native copy's call
      let at = this.at;
      for (let p = from; p < to; p++) chunk[at++] = bytes[p] as number;
      this.at = at;
    } else this.at += bytes.copy(chunk, this.at, from, to);
  }

  private writeField(type: ParsedType, field: string | number | bigint | boolean, doc: RowDoc): void {
    if (type.kind === "nullable") {
      this.reserve(1);
      this.chunk[this.at++] = 0;
      this.writeField(type.inner, field, doc);
      return;
    }
    if (typeof field === "string" && (type.kind === "string" || type.kind === "fixed_string")) {
      const bytes = field === doc.text ? doc.value : Buffer.from(field, "utf8");
      this.writeStringBytes(type, bytes, 0, bytes.length);
      return;
    }
    if (typeof field === "number" && type.kind === "int" && Number.isSafeInteger(field)) {
      this.writeSafeInt(type, field);
      return;
    }
    if ((typeof field === "number" || typeof field === "bigint") && (type.kind === "int" || type.kind === "float")) {
      this.reserve(8);
      const at = writeNumberText(String(field), type, this.chunk, this.at);
      if (at === undefined) throw NotExact.instance;
      this.at = at;
      return;
    }
    throw NotExact.instance;
  }

  /** A safe integer into an integer column, or NotExact when out of its range. */
  private writeSafeInt(type: Extract<ParsedType, { kind: "int" }>, value: number): void {
    const [min, max] = SAFE_RANGES[type.name];
    if (value < min || value > max) throw NotExact.instance;
    this.reserve(8);
    const chunk = this.chunk;
    switch (type.bytes) {
      case 1:
        chunk[this.at++] = value & 0xff;
        return;
      case 2:
        this.at = chunk.writeUInt16LE(value & 0xffff, this.at);
        return;
      case 4:
        this.at = chunk.writeUInt32LE(value >>> 0, this.at);
        return;
      case 8:
        if (value < 0) {
          this.at = chunk.writeBigInt64LE(BigInt(value), this.at);
          return;
        }
        this.at = chunk.writeUInt32LE(value % 0x100000000, this.at);
        this.at = chunk.writeUInt32LE(Math.floor(value / 0x100000000), this.at);
    }
  }

  private writeStringBytes(type: ParsedType, bytes: Buffer, from: number, to: number): void {
    if (type.kind === "string") {
      this.writeBytes(bytes, from, to);
      return;
    }
    if (type.kind !== "fixed_string" || to - from > type.length) throw NotExact.instance;
    this.reserve(type.length);
    const at = this.at + bytes.copy(this.chunk, this.at, from, to);
    this.chunk.fill(0, at, this.at + type.length);
    this.at += type.length;
  }

  /** Writes the JSON value at bytes[from, to) as `type`, or throws NotExact. */
  private writeValue(type: ParsedType, bytes: Buffer, from: number, to: number): void {
    const c = bytes[from];
    switch (type.kind) {
      case "nullable":
        this.reserve(1);
        if (c === LOWER_N) {
          this.chunk[this.at++] = 1;
          return;
        }
        this.chunk[this.at++] = 0;
        this.writeValue(type.inner, bytes, from, to);
        return;
      case "float":
      case "int": {
        if (c !== MINUS && (c === undefined || c < ZERO || c > NINE)) throw NotExact.instance;
        const n = exactNumber(bytes, from, to);
        if (n === undefined) {
          // an integer of 16+ digits for an integer column: exact by BigInt
          if (type.kind !== "int") throw NotExact.instance;
          this.reserve(8);
          const at = writeNumberText(bytes.toString("latin1", from, to), type, this.chunk, this.at);
          if (at === undefined) throw NotExact.instance;
          this.at = at;
          return;
        }
        this.reserve(8);
        if (type.kind === "float") {
          if (type.bytes === 8) this.at = this.chunk.writeDoubleLE(n.value, this.at);
          else if (Math.fround(n.value) === n.value) this.at = this.chunk.writeFloatLE(n.value, this.at);
          else throw NotExact.instance;
          return;
        }
        if (!n.integer) throw NotExact.instance;
        this.writeSafeInt(type, n.value);
        return;
      }
      case "string":
      case "fixed_string": {
        if (c !== QUOTE) throw NotExact.instance;
        let escaped = false;
        for (let p = from + 1; p < to - 1; p++) {
          if (bytes[p] === BACKSLASH) {
            escaped = true;
            break;
          }
        }
        if (!escaped) {
          this.writeStringBytes(type, bytes, from + 1, to - 1);
          return;
        }
        const decoded = JSON.parse(bytes.toString("utf8", from, to)) as string;
        // a surrogate from an escape (a pair or a lone one): each server joins them its own way
        if (SURROGATE.test(decoded)) throw NotExact.instance;
        const out = Buffer.from(decoded, "utf8");
        this.writeStringBytes(type, out, 0, out.length);
        return;
      }
      case "array": {
        if (c !== OPEN_BRACKET) throw NotExact.instance;
        const starts: number[] = [];
        const ends: number[] = [];
        let i = skipJsonWhitespace(bytes, from + 1);
        while (bytes[i] !== CLOSE_BRACKET) {
          const end = memberValueEnd(bytes, i);
          starts.push(i);
          ends.push(end);
          i = skipJsonWhitespace(bytes, end);
          if (bytes[i] === COMMA) i = skipJsonWhitespace(bytes, i + 1);
        }
        this.reserve(varintLength(starts.length));
        this.at = writeVarint(this.chunk, this.at, starts.length);
        for (let e = 0; e < starts.length; e++) this.writeValue(type.element, bytes, starts[e] as number, ends[e] as number);
        return;
      }
      case "date":
      case "datetime":
        throw NotExact.instance; // a date written as text: the server's parser reads it
    }
  }
}

/** The RowBinary fill of a column: its constant DEFAULT when it has one the encoder can write, else its type's default. */
export function columnFill(type: ParsedType, constant: Buffer | undefined): Buffer {
  return constant ?? defaultBytes(type);
}
