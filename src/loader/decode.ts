// Message decoding without a round trip: a Kafka value either becomes a document the splice route
// can copy into a JSONEachRow line, or an undecodable verdict with a reason code, decided here so
// ClickHouse never sees a value it would refuse for not being JSON. Checks run cheapest first:
// size (from the byte length alone), UTF-8, then, for "json-object", syntax and shape.
import { isUtf8 } from "node:buffer";
import { jsonValueEnd, skipJsonWhitespace, trimJsonWhitespaceEnd } from "./json-bytes.ts";

/**
 * How a topic's values are read:
 * - "json-object": each value must be one JSON object; its members are spliced into the row.
 * - "text": any UTF-8 text is a row; the router puts the text in a string field.
 */
export const DECODE_MODES = ["json-object", "text"] as const;
export type DecodeMode = (typeof DECODE_MODES)[number];

/** Why a message value is not a row. */
export const UNDECODABLE_REASONS = ["too_large", "invalid_utf8", "not_json", "not_object"] as const;
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
}

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
  const members = objectMembers(value);
  if (members !== undefined) return { ok: true, text, bytes, members };
  return verdictOfJsonParse(value, text, bytes);
}

/** The members of a value that is one JSON object (whitespace around allowed), per the byte check. */
function objectMembers(value: Buffer): ObjectMembers | undefined {
  const open = skipJsonWhitespace(value, 0);
  if (value[open] !== 0x7b) return undefined;
  const end = jsonValueEnd(value, open);
  if (end < 0 || skipJsonWhitespace(value, end) !== value.length) return undefined;
  const start = skipJsonWhitespace(value, open + 1);
  return { start, end, empty: start === end - 1 };
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
