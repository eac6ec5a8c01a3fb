// Message decoding without a round trip: a Kafka value either becomes a document the splice route
// can copy into a JSONEachRow line, or an undecodable verdict with a reason code, decided here so
// ClickHouse never sees a value it would refuse for not being JSON. Checks run cheapest first:
// size (from the byte length alone), UTF-8, then, for "json-object", syntax and shape in one pass:
// nesting depth, fields, key, string and number lengths, the shapes a ClickHouse server may die or
// stall on (docs/loader.md, "Shapes that kill a server"), so such a value never reaches an INSERT.
import { isUtf8 } from "node:buffer";
import { JSON_SHAPE_FAULTS, scanJsonValue, skipJsonWhitespace, trimJsonWhitespaceEnd, type JsonShapeFault, type JsonShapeLimits } from "./json-bytes.ts";

/**
 * How a topic's values are read:
 * - "json-object": each value must be one JSON object; its members are spliced into the row.
 * - "text": any UTF-8 text is a row; the router puts the text in a string field.
 */
export const DECODE_MODES = ["json-object", "text"] as const;
export type DecodeMode = (typeof DECODE_MODES)[number];

/** Why a message value is not a row. */
export const UNDECODABLE_REASONS = ["too_large", "invalid_utf8", "not_json", "not_object", ...JSON_SHAPE_FAULTS] as const;
export type UndecodableReason = (typeof UNDECODABLE_REASONS)[number];

/**
 * Where a JSON object's members lie in the value's bytes: from the first byte after `{` and the
 * whitespace after it, up to and including the closing `}` (whitespace after it excluded). An empty
 * object's members are just its `}`.
 */
export interface ObjectMembers {
  start: number;
  end: number;
  empty: boolean;
}

export type DecodeResult =
  | { ok: true; text: string; bytes: number; /** set in "json-object" mode */ members: ObjectMembers | undefined }
  | { ok: false; reason: UndecodableReason; detail: string; bytes: number };

export interface DecodeLimits {
  maxMessageBytes: number;
  /** "json-object" only; DEFAULT_SHAPE_LIMITS when absent. */
  shapeLimits?: JsonShapeLimits;
}

/**
 * Far below what ClickHouse 18.16 survives (docs/loader.md has the measured figures): it died at
 * 29,062 levels of nesting in a skipped field and survived every width and length that fits in
 * 1 MiB. The world's hits nest a few levels and have about 50 fields.
 * src/config/loader.ts repeats these as its defaults (one test checks they agree).
 */
export const DEFAULT_SHAPE_LIMITS: Readonly<JsonShapeLimits> = Object.freeze({
  maxDepth: 1000,
  maxFields: 10_000,
  maxKeyBytes: 1024,
  maxStringBytes: 256 * 1024,
  maxNumberChars: 256,
});

const SHAPE_LIMIT_NAMES: Record<JsonShapeFault, keyof JsonShapeLimits> = {
  too_deep: "maxDepth",
  too_many_fields: "maxFields",
  key_too_long: "maxKeyBytes",
  string_too_long: "maxStringBytes",
  number_too_long: "maxNumberChars",
};

function undecodable(reason: UndecodableReason, detail: string, bytes: number): DecodeResult {
  return { ok: false, reason, detail, bytes };
}

/** Decodes one message value. A tombstone (null value) is no document in either mode: not_json. */
export function decodeMessageValue(value: Buffer | null, mode: DecodeMode, limits: DecodeLimits): DecodeResult {
  if (value === null) return undecodable("not_json", "tombstone (null value)", 0);
  const bytes = value.length;
  if (bytes > limits.maxMessageBytes) {
    return undecodable("too_large", `${bytes} bytes, limit ${limits.maxMessageBytes}`, bytes);
  }
  // Validated first (native, no copy): toString would turn a bad sequence into U+FFFD silently.
  if (!isUtf8(value)) return undecodable("invalid_utf8", "value is not valid UTF-8", bytes);
  const text = value.toString("utf8");
  if (mode === "text") return { ok: true, text, bytes, members: undefined };
  const shapeLimits = limits.shapeLimits ?? DEFAULT_SHAPE_LIMITS;
  const open = skipJsonWhitespace(value, 0);
  if (value[open] === 0x7b) {
    const scan = scanJsonValue(value, open, shapeLimits);
    if (scan.fault !== undefined) {
      const limit = SHAPE_LIMIT_NAMES[scan.fault];
      return undecodable(scan.fault, `${scan.size}, over ${limit} ${shapeLimits[limit]}`, bytes);
    }
    if (scan.end >= 0 && skipJsonWhitespace(value, scan.end) === value.length) {
      const start = skipJsonWhitespace(value, open + 1);
      return { ok: true, text, bytes, members: { start, end: scan.end, empty: start === scan.end - 1 } };
    }
  }
  return verdictOfJsonParse(value, text, bytes);
}

/** The slow path, for values the byte check refused: JSON.parse names the fault. Should it accept
 * an object the byte check refused, the object is a row (the check must only never say yes wrongly). */
function verdictOfJsonParse(value: Buffer, text: string, bytes: number): DecodeResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return undecodable("not_json", err instanceof Error ? err.message : String(err), bytes);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : typeof parsed;
    return undecodable("not_object", `top-level JSON value is ${kind}, not an object`, bytes);
  }
  const end = trimJsonWhitespaceEnd(value, value.length);
  const start = skipJsonWhitespace(value, skipJsonWhitespace(value, 0) + 1);
  return { ok: true, text, bytes, members: { start, end, empty: start === end - 1 } };
}
