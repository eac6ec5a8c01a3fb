// Message decoding without a round trip: a Kafka value either becomes a JSON object row or an
// undecodable verdict with a reason code, decided here so ClickHouse never sees a value it would
// refuse for not being JSON. Checks run cheapest first: size, UTF-8, syntax, shape.
import { isUtf8 } from "node:buffer";
import { parseJsonLossless, type JsonObject } from "./json-lossless.ts";

/** Why a message value is not a row. */
export const UNDECODABLE_REASONS = ["too_large", "invalid_utf8", "not_json", "not_object"] as const;
export type UndecodableReason = (typeof UNDECODABLE_REASONS)[number];

export type DecodeResult =
  | { ok: true; row: JsonObject; bytes: number }
  | { ok: false; reason: UndecodableReason; detail: string; bytes: number };

export interface DecodeLimits {
  maxMessageBytes: number;
}

function undecodable(reason: UndecodableReason, detail: string, bytes: number): DecodeResult {
  return { ok: false, reason, detail, bytes };
}

/** Decodes one message value (null = tombstone, which is not JSON). */
export function decodeMessageValue(value: Buffer | null, limits: DecodeLimits): DecodeResult {
  if (value === null) return undecodable("not_json", "tombstone (null value)", 0);
  const bytes = value.length;
  if (bytes > limits.maxMessageBytes) {
    return undecodable("too_large", `${bytes} bytes, limit ${limits.maxMessageBytes}`, bytes);
  }
  // Validated first (native, no copy): toString would turn a bad sequence into U+FFFD silently.
  if (!isUtf8(value)) return undecodable("invalid_utf8", "value is not valid UTF-8", bytes);
  const text = value.toString("utf8");
  let parsed;
  try {
    parsed = parseJsonLossless(text);
  } catch (err) {
    return undecodable("not_json", err instanceof Error ? err.message : String(err), bytes);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const kind = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : typeof parsed;
    return undecodable("not_object", `top-level JSON value is ${kind}, not an object`, bytes);
  }
  return { ok: true, row: parsed, bytes };
}
