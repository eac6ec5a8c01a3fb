// JSON on UTF-8 bytes, for the splice route: a strict syntax check (RFC 8259) that builds nothing,
// and a string escaper that writes a JSON string straight from a message's bytes. Both are plain
// byte loops: on Node 20 they cost about half of JSON.parse and JSON.stringify on a 1.1 KB hit,
// because neither allocates. The check only has to be sound when it says yes: decode.ts asks
// JSON.parse for the verdict whenever it says no.

// the bytes of JSON's syntax (row-binary.ts reads the same ones)
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const MINUS = 0x2d;
export const PLUS = 0x2b;
export const DOT = 0x2e;
export const ZERO = 0x30;
export const NINE = 0x39;

/** The first index at or after `from` that is not JSON whitespace (space, tab, LF, CR). */
export function skipJsonWhitespace(bytes: Uint8Array, from: number): number {
  let i = from;
  while (i < bytes.length) {
    const c = bytes[i];
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
    i++;
  }
  return i;
}

/** One past the last byte before `to` that is not JSON whitespace. */
export function trimJsonWhitespaceEnd(bytes: Uint8Array, to: number): number {
  let end = to;
  while (end > 0) {
    const c = bytes[end - 1];
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
    end--;
  }
  return end;
}

function isHexDigit(c: number | undefined): boolean {
  return c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** 1 for the bytes a JSON string cannot hold as they are: `"`, `\\` and the control characters. */
const STRING_SPECIAL = new Uint8Array(256);
for (let c = 0; c < SPACE; c++) STRING_SPECIAL[c] = 1;
STRING_SPECIAL[QUOTE] = 1;
STRING_SPECIAL[BACKSLASH] = 1;

/** Past the closing quote of a string whose opening quote is just before `from`; -1 if invalid. */
export function stringEnd(bytes: Uint8Array, from: number): number {
  const n = bytes.length;
  let i = from;
  while (i < n) {
    const c = bytes[i] as number;
    if (STRING_SPECIAL[c] === 0) {
      i++; // the common case: one table read per byte
    } else if (c === QUOTE) {
      return i + 1;
    } else if (c === BACKSLASH) {
      const e = bytes[i + 1];
      if (e === 0x75 /* u */) {
        if (!(isHexDigit(bytes[i + 2]) && isHexDigit(bytes[i + 3]) && isHexDigit(bytes[i + 4]) && isHexDigit(bytes[i + 5]))) return -1;
        i += 6;
      } else if (e === QUOTE || e === BACKSLASH || e === 0x2f /* / */ || e === 0x62 /* b */ || e === 0x66 /* f */ || e === 0x6e /* n */ || e === 0x72 /* r */ || e === 0x74 /* t */) {
        i += 2;
      } else {
        return -1;
      }
    } else {
      return -1; // a raw control character: JSON wants it escaped
    }
  }
  return -1;
}

function digitsEnd(bytes: Uint8Array, from: number): number {
  let i = from;
  while (i < bytes.length) {
    const c = bytes[i] ?? 0;
    if (c < ZERO || c > NINE) break;
    i++;
  }
  return i;
}

/** Past a number `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?` starting at `from`; -1 if there is none. */
export function numberEnd(bytes: Uint8Array, from: number): number {
  let i = bytes[from] === MINUS ? from + 1 : from;
  const first = bytes[i];
  if (first === ZERO) i++;
  else if (first !== undefined && first > ZERO && first <= NINE) i = digitsEnd(bytes, i + 1);
  else return -1;
  if (bytes[i] === DOT) {
    const fraction = digitsEnd(bytes, i + 1);
    if (fraction === i + 1) return -1;
    i = fraction;
  }
  const e = bytes[i];
  if (e === 0x65 || e === 0x45) {
    i++;
    if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
    const exponent = digitsEnd(bytes, i);
    if (exponent === i) return -1;
    i = exponent;
  }
  return i;
}

/** Past the literal `word` (ASCII) at `from`; -1 if the bytes differ. */
function literalEnd(bytes: Uint8Array, from: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (bytes[from + k] !== word.charCodeAt(k)) return -1;
  return from + word.length;
}

/**
 * Bounds on a JSON value's shape, checked in the same pass as its syntax (docs/loader.md, "Shapes
 * that kill a server": ClickHouse 18.16 dies of stack overflow skipping an unknown field nested
 * about 29,000 levels deep). Depth counts open containers, the outer one included; fields count
 * the object members at every level; key and string bytes are measured as written (escapes
 * included, quotes not); a number's characters include its sign, point and exponent.
 */
export interface JsonShapeLimits {
  maxDepth: number;
  maxFields: number;
  maxKeyBytes: number;
  maxStringBytes: number;
  maxNumberChars: number;
}

export const JSON_SHAPE_FAULTS = ["too_deep", "too_many_fields", "key_too_long", "string_too_long", "number_too_long"] as const;
export type JsonShapeFault = (typeof JSON_SHAPE_FAULTS)[number];

/** Where a scan stopped: `end` is past the value, or -1 when the bytes are not one valid JSON value
 * (`fault` undefined) or a shape limit was passed (`fault` names it, `size` is what was measured). */
export interface JsonScan {
  end: number;
  fault: JsonShapeFault | undefined;
  size: number;
  /** Object members met so far. */
  fields: number;
}

const NO_LIMITS: JsonShapeLimits = { maxDepth: Infinity, maxFields: Infinity, maxKeyBytes: Infinity, maxStringBytes: Infinity, maxNumberChars: Infinity };

/**
 * The index just past the one JSON value that starts at `from` (no whitespace skipped before it),
 * or -1 when the bytes there are not a valid JSON value. No shape limits.
 */
export function jsonValueEnd(bytes: Uint8Array, from: number): number {
  return scanJsonValue(bytes, from, NO_LIMITS).end;
}

/** Past a scalar, or -1; a string or number longer than its limit sets `scan.fault`. */
function boundedScalarEnd(bytes: Uint8Array, from: number, limits: JsonShapeLimits, scan: JsonScan): number {
  const c = bytes[from];
  if (c === QUOTE) {
    const end = stringEnd(bytes, from + 1);
    return end - from - 2 > limits.maxStringBytes ? fail(scan, "string_too_long", end - from - 2) : end;
  }
  if (c === 0x74) return literalEnd(bytes, from, "true");
  if (c === 0x66) return literalEnd(bytes, from, "false");
  if (c === 0x6e) return literalEnd(bytes, from, "null");
  const end = numberEnd(bytes, from);
  return end - from > limits.maxNumberChars ? fail(scan, "number_too_long", end - from) : end;
}

/** Past `"name"` + whitespace + `:` + whitespace, at an object member's opening quote; -1 if invalid
 * or past a limit (the member count or the key's length; `scan.fault` says which). */
function memberValueStart(bytes: Uint8Array, at: number, limits: JsonShapeLimits, scan: JsonScan): number {
  if (++scan.fields > limits.maxFields) return fail(scan, "too_many_fields", scan.fields);
  if (bytes[at] !== QUOTE) return -1;
  const name = stringEnd(bytes, at + 1);
  if (name < 0) return -1;
  if (name - at - 2 > limits.maxKeyBytes) return fail(scan, "key_too_long", name - at - 2);
  const colon = skipJsonWhitespace(bytes, name);
  return bytes[colon] === COLON ? skipJsonWhitespace(bytes, colon + 1) : -1;
}

function fail(scan: JsonScan, fault: JsonShapeFault, size: number): number {
  scan.fault = fault;
  scan.size = size;
  return -1;
}

/**
 * Scans the one JSON value that starts at `from` against syntax and `limits`. Nesting is tracked
 * on an explicit stack, so depth costs memory, not call stack. The scan stops at the first fault,
 * so a value that is both too deep and broken further on is called too deep.
 */
export function scanJsonValue(bytes: Uint8Array, from: number, limits: JsonShapeLimits): JsonScan {
  const scan: JsonScan = { end: -1, fault: undefined, size: 0, fields: 0 };
  const open: boolean[] = []; // true: inside an object, false: inside an array
  let i = from;
  for (;;) {
    // a value starts at i
    const c = bytes[i];
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      const inner = skipJsonWhitespace(bytes, i + 1);
      if (open.length + 1 > limits.maxDepth) {
        fail(scan, "too_deep", open.length + 1);
        return scan;
      }
      if (bytes[inner] === (c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)) {
        i = inner + 1;
      } else {
        i = c === OPEN_BRACE ? memberValueStart(bytes, inner, limits, scan) : inner;
        if (i < 0) return scan;
        open.push(c === OPEN_BRACE);
        continue;
      }
    } else {
      i = boundedScalarEnd(bytes, i, limits, scan);
      if (i < 0) return scan;
    }
    // a value ended at i: close containers until a comma leads to the next value
    for (;;) {
      if (open.length === 0) {
        scan.end = i;
        return scan;
      }
      i = skipJsonWhitespace(bytes, i);
      const inObject = open[open.length - 1] === true;
      const next = bytes[i];
      if (next === COMMA) {
        const after = skipJsonWhitespace(bytes, i + 1);
        i = inObject ? memberValueStart(bytes, after, limits, scan) : after;
        if (i < 0) return scan;
        break;
      }
      if (next !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return scan;
      open.pop();
      i++;
    }
  }
}

/** An upper bound of the bytes writeJsonString writes for `source`. */
export function jsonStringMaxBytes(source: Uint8Array): number {
  return source.length * 6 + 2;
}

const HEX = "0123456789abcdef";

/**
 * Writes the UTF-8 text in `source` as a JSON string (quotes included) into `target` at `at`;
 * returns the index after it. `source` must be valid UTF-8 and `target` must have room for
 * jsonStringMaxBytes(source). Escapes what JSON.stringify escapes in such text: `"`, `\`, and
 * control characters (\b \f \n \r \t by name, the others as \u00XX), so both give the same bytes.
 */
export function writeJsonString(source: Uint8Array, target: Uint8Array, at: number): number {
  let j = at;
  target[j++] = QUOTE;
  const n = source.length;
  for (let i = 0; i < n; i++) {
    const c = source[i] as number;
    if (STRING_SPECIAL[c] === 0) {
      target[j++] = c; // the common case: one table read per byte
    } else if (c === QUOTE || c === BACKSLASH) {
      target[j++] = BACKSLASH;
      target[j++] = c;
    } else {
      target[j++] = BACKSLASH;
      if (c === LF) target[j++] = 0x6e;
      else if (c === CR) target[j++] = 0x72;
      else if (c === TAB) target[j++] = 0x74;
      else if (c === 0x08) target[j++] = 0x62;
      else if (c === 0x0c) target[j++] = 0x66;
      else {
        target[j++] = 0x75;
        target[j++] = ZERO;
        target[j++] = ZERO;
        target[j++] = HEX.charCodeAt(c >> 4);
        target[j++] = HEX.charCodeAt(c & 15);
      }
    }
  }
  target[j++] = QUOTE;
  return j;
}
