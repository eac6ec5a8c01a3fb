// ClickHouse column types as the loader's RowBinary encoder knows them: parsed at run time from
// system.columns' `type` text (the schema cache, table-schema.ts). The encoder writes exactly the
// kinds below; a column of any other type is left to the server (omitted from the INSERT's column
// list, so it takes its DEFAULT), and a row that carries a value for it goes JSONEachRow.
//
// RowBinary, as 18.16 and modern servers read it: integers and floats little-endian in their width;
// String as a LEB128 length and its bytes; FixedString(N) as N bytes; Date as UInt16 days;
// DateTime as UInt32 seconds; Nullable(T) as a byte (1 = NULL) then T unless NULL; Array(T) as a
// LEB128 count then its elements; LowCardinality(T) as T.

export type IntKind = "Int8" | "Int16" | "Int32" | "Int64" | "UInt8" | "UInt16" | "UInt32" | "UInt64";

export type ParsedType =
  | { kind: "int"; name: IntKind; bytes: 1 | 2 | 4 | 8; signed: boolean }
  | { kind: "float"; bytes: 4 | 8 }
  | { kind: "string" }
  | { kind: "fixed_string"; length: number }
  | { kind: "date" }
  | { kind: "datetime" }
  | { kind: "nullable"; inner: ParsedType }
  | { kind: "array"; element: ParsedType };

const INTS: Record<IntKind, { bytes: 1 | 2 | 4 | 8; signed: boolean }> = {
  Int8: { bytes: 1, signed: true },
  Int16: { bytes: 2, signed: true },
  Int32: { bytes: 4, signed: true },
  Int64: { bytes: 8, signed: true },
  UInt8: { bytes: 1, signed: false },
  UInt16: { bytes: 2, signed: false },
  UInt32: { bytes: 4, signed: false },
  UInt64: { bytes: 8, signed: false },
};

/** The one argument of `Name(arg)`, or undefined when `text` is not that shape. */
function argumentOf(text: string, name: string): string | undefined {
  return text.startsWith(`${name}(`) && text.endsWith(")") ? text.slice(name.length + 1, -1).trim() : undefined;
}

/** A type the encoder writes, or why it does not (the column is then the server's to fill). */
export function parseClickHouseType(text: string): ParsedType | { unsupported: string } {
  const t = text.trim();
  if (t in INTS) {
    const int = INTS[t as IntKind];
    return { kind: "int", name: t as IntKind, ...int };
  }
  if (t === "Float64") return { kind: "float", bytes: 8 };
  if (t === "Float32") return { kind: "float", bytes: 4 };
  if (t === "String") return { kind: "string" };
  if (t === "Date") return { kind: "date" };
  // DateTime and DateTime('zone'): the zone changes how text is read, not the stored seconds
  if (t === "DateTime" || /^DateTime\('[^']*'\)$/.test(t)) return { kind: "datetime" };
  const fixed = argumentOf(t, "FixedString");
  if (fixed !== undefined) {
    const length = Number(fixed);
    return Number.isInteger(length) && length > 0 ? { kind: "fixed_string", length } : { unsupported: `FixedString length '${fixed}'` };
  }
  for (const [name, wrap] of [
    ["Nullable", (inner: ParsedType): ParsedType => ({ kind: "nullable", inner })],
    ["Array", (element: ParsedType): ParsedType => ({ kind: "array", element })],
    ["LowCardinality", (inner: ParsedType): ParsedType => inner],
  ] as const) {
    const arg = argumentOf(t, name);
    if (arg === undefined) continue;
    const inner = parseClickHouseType(arg);
    return "unsupported" in inner ? inner : wrap(inner);
  }
  return { unsupported: `type ${t}` };
}

/** The type's name as ClickHouse writes it, for messages. */
export function typeName(type: ParsedType): string {
  switch (type.kind) {
    case "int":
      return type.name;
    case "float":
      return type.bytes === 8 ? "Float64" : "Float32";
    case "string":
      return "String";
    case "fixed_string":
      return `FixedString(${type.length})`;
    case "date":
      return "Date";
    case "datetime":
      return "DateTime";
    case "nullable":
      return `Nullable(${typeName(type.inner)})`;
    case "array":
      return `Array(${typeName(type.element)})`;
  }
}

/** The RowBinary bytes of the type's default value (0, '', [], NULL for Nullable, the zero date). */
export function defaultBytes(type: ParsedType): Buffer {
  switch (type.kind) {
    case "int":
    case "float":
      return Buffer.alloc(type.bytes);
    case "string":
    case "array":
      return Buffer.from([0]);
    case "fixed_string":
      return Buffer.alloc(type.length);
    case "date":
      return Buffer.alloc(2);
    case "datetime":
      return Buffer.alloc(4);
    case "nullable":
      return Buffer.from([1]);
  }
}

/**
 * A column default the encoder may write itself: a number or a quoted string literal, as
 * system.columns shows the expression (`0`, `-1.5`, `'none'`). Anything else (now(), an
 * expression of other columns) is the server's to evaluate: undefined.
 */
export function constantDefault(expression: string, type: ParsedType): Buffer | undefined {
  const e = expression.trim();
  if (type.kind === "int" || type.kind === "float") {
    if (!/^-?\d+(\.\d+)?$/.test(e)) return undefined;
    const out = Buffer.alloc(type.bytes);
    const written = writeNumberText(e, type, out, 0);
    return written === undefined ? undefined : out;
  }
  if (type.kind === "string") {
    const m = /^'((?:[^'\\]|\\.)*)'$/.exec(e);
    if (m === null || (m[1] ?? "").includes("\\")) return undefined; // escapes: the server's
    const bytes = Buffer.from(m[1] ?? "", "utf8");
    const out = Buffer.alloc(varintLength(bytes.length) + bytes.length);
    const at = writeVarint(out, 0, bytes.length);
    bytes.copy(out, at);
    return out;
  }
  return undefined;
}

export function varintLength(n: number): number {
  let length = 1;
  for (let v = n; v >= 0x80; v = Math.floor(v / 128)) length++;
  return length;
}

/** Writes `n` (a non-negative safe integer) as LEB128 at `at`; returns the index after it. */
export function writeVarint(out: Buffer, at: number, n: number): number {
  let v = n;
  let i = at;
  while (v >= 0x80) {
    out[i++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  out[i++] = v;
  return i;
}

const INT_RANGES: Record<IntKind, [bigint, bigint]> = {
  Int8: [-128n, 127n],
  Int16: [-32768n, 32767n],
  Int32: [-2147483648n, 2147483647n],
  Int64: [-(2n ** 63n), 2n ** 63n - 1n],
  UInt8: [0n, 255n],
  UInt16: [0n, 65535n],
  UInt32: [0n, 4294967295n],
  UInt64: [0n, 2n ** 64n - 1n],
};

/** Decimal digits a float literal may have for every parser to read it the same (Clinger's fast path). */
const EXACT_FLOAT_DIGITS = 15;
const EXACT_FLOAT_EXPONENT = 22;

/**
 * Writes a JSON number's text into `out` at `at` as `type` (int or float); returns the index after
 * it, or undefined when the text is not one whose value every ClickHouse reads the same way: an
 * integer out of the type's range or written with a point or exponent, a float with more than 15
 * significant digits or a decimal exponent past ±22 (those the server rounds by its own parser).
 */
export function writeNumberText(text: string, type: Extract<ParsedType, { kind: "int" | "float" }>, out: Buffer, at: number): number | undefined {
  if (type.kind === "int") {
    if (!/^-?(0|[1-9]\d{0,19})$/.test(text)) return undefined;
    const value = BigInt(text);
    const [min, max] = INT_RANGES[type.name];
    if (value < min || value > max) return undefined;
    switch (type.bytes) {
      case 1:
        return type.signed ? out.writeInt8(Number(value), at) : out.writeUInt8(Number(value), at);
      case 2:
        return type.signed ? out.writeInt16LE(Number(value), at) : out.writeUInt16LE(Number(value), at);
      case 4:
        return type.signed ? out.writeInt32LE(Number(value), at) : out.writeUInt32LE(Number(value), at);
      case 8:
        return type.signed ? out.writeBigInt64LE(value, at) : out.writeBigUInt64LE(value, at);
    }
  }
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (m === null) return undefined;
  const intPart = m[1] ?? "";
  const fraction = m[2] ?? "";
  const digits = (intPart + fraction).replace(/^0+/, "");
  const exponent = Number(m[3] ?? "0") - fraction.length;
  if (digits.length > EXACT_FLOAT_DIGITS || Math.abs(exponent) > EXACT_FLOAT_EXPONENT) return undefined;
  const value = Number(text);
  if (type.bytes === 8) return out.writeDoubleLE(value, at);
  // Float32: only values a float holds exactly (the server narrows by its own rounding otherwise)
  if (Math.fround(value) !== value) return undefined;
  return out.writeFloatLE(value, at);
}
