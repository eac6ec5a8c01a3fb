// JSON with exact integers. JSON.parse turns every number into a double, so an id above 2^53
// (a UInt64 WatchID, say) would silently change. Here an integer literal outside the safe range
// becomes a bigint, holding exactly the digits that were sent, and the serialiser writes a bigint
// back as those bare digits. Every other number is a JS number: a safe integer is exact, a
// fraction or exponent literal is the nearest double (what a Float64 column stores anyway).
//
// Node 20 has neither JSON.parse's source-text access nor JSON.rawJSON, so the rare text that may
// hold an unsafe integer gets one string-aware pass that quotes each unsafe integer literal with a
// per-process random marker, and the reviver turns marked strings back into bigints. A message
// cannot forge the marker: it is 128 random bits chosen at start.
import { randomBytes } from "node:crypto";

export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

const MARKER = `\u0000bigint:${randomBytes(16).toString("hex")}:`;
const QUOTED_MARKER = JSON.stringify(MARKER);
const MARKED_BIGINT = new RegExp(`"${escapeRegExp(QUOTED_MARKER.slice(1, -1))}(-?\\d+)"`, "g");
/** A prefilter with no false negatives: an unsafe integer has 17+ digits, or 16 starting with 9
 * (Number.MAX_SAFE_INTEGER is 9007199254740991), so typical 16-digit ids skip the slow path. */
const MAYBE_UNSAFE_INTEGER = /\d{17}|9\d{15}/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/**
 * Quotes, with the marker, every integer literal in a value position (top level, after `:`, `[`, or
 * `,` inside an array) that a double cannot hold exactly. Only value positions: quoting a literal in
 * a key position (`{123…:1}`) would turn invalid JSON into valid JSON.
 */
function markUnsafeIntegers(text: string): string {
  let out = "";
  let copiedUpTo = 0;
  const inArray: boolean[] = [];
  let previous = -1; // the last significant character outside strings, -1 at the start
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      while (i < text.length && text.charCodeAt(i) !== 34) i += text.charCodeAt(i) === 92 /* \ */ ? 2 : 1;
      i++;
      previous = 34;
      continue;
    }
    if (c === 45 /* - */ || isDigit(c)) {
      const start = i;
      i++;
      while (i < text.length && /[0-9.eE+-]/.test(text.charAt(i))) i++;
      const literal = text.slice(start, i);
      const valueSlot = previous === -1 || previous === 58 /* : */ || previous === 91 /* [ */ || (previous === 44 /* , */ && inArray.at(-1) === true);
      if (valueSlot && /^-?(0|[1-9]\d*)$/.test(literal) && !Number.isSafeInteger(Number(literal))) {
        out += text.slice(copiedUpTo, start) + `"${QUOTED_MARKER.slice(1, -1)}${literal}"`;
        copiedUpTo = i;
      }
      previous = 48; // a digit: a value ended here
      continue;
    }
    if (c === 91 /* [ */ || c === 123 /* { */) inArray.push(c === 91);
    else if (c === 93 /* ] */ || c === 125 /* } */) inArray.pop();
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) previous = c;
    i++;
  }
  return copiedUpTo === 0 ? text : out + text.slice(copiedUpTo);
}

function reviveBigint(_key: string, value: unknown): unknown {
  return typeof value === "string" && value.startsWith(MARKER) ? BigInt(value.slice(MARKER.length)) : value;
}

/** JSON.parse, with integers outside ±(2^53 − 1) as bigint. Throws SyntaxError on bad JSON. */
export function parseJsonLossless(text: string): JsonValue {
  if (!MAYBE_UNSAFE_INTEGER.test(text)) return JSON.parse(text) as JsonValue;
  const marked = markUnsafeIntegers(text);
  if (marked === text) return JSON.parse(text) as JsonValue;
  // The marked text is valid JSON exactly when the original is: only number tokens were replaced.
  return JSON.parse(marked, reviveBigint) as JsonValue;
}

function replaceBigint(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? MARKER + value.toString() : value;
}

/** JSON.stringify that writes a bigint as its bare digits (a JSON number ClickHouse reads exactly). */
export function stringifyJsonLossless(value: JsonValue): string {
  // Without a replacer first: a replacer makes JSON.stringify several times slower, and only a
  // value holding a bigint needs one (JSON.stringify throws a TypeError on a bigint).
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  const text = JSON.stringify(value, replaceBigint);
  return text.includes(QUOTED_MARKER.slice(1, 8)) ? text.replace(MARKED_BIGINT, "$1") : text;
}
