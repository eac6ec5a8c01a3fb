// Message decoding: every verdict in both modes, and the byte-level JSON check agreeing with
// JSON.parse on thousands of valid and broken texts (it must never accept what JSON.parse refuses).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { DEFAULT_SHAPE_LIMITS, decodeMessageValue, type DecodeMode } from "../../src/loader/decode.ts";
import { jsonValueEnd, skipJsonWhitespace } from "../../src/loader/json-bytes.ts";
import { randomInt, seededRandom } from "../../testkit/loader-support.ts";

const limits = { maxMessageBytes: 1024 };
const decode = (value: string | Buffer | null, mode: DecodeMode = "json-object") =>
  decodeMessageValue(typeof value === "string" ? Buffer.from(value) : value, mode, limits);

describe("decodeMessageValue", () => {
  test("a JSON object is a row: its text, and where its members lie", () => {
    const text = '  {  "id":42,"price":19.5,"name":"x","tags":[1,2],"nested":{"a":null,"b":true}} \n';
    const result = decode(text);
    assert.ok(result.ok);
    assert.equal(result.text, text);
    assert.equal(result.bytes, Buffer.byteLength(text));
    assert.ok(result.members !== undefined);
    assert.equal(text.slice(result.members.start, result.members.end), '"id":42,"price":19.5,"name":"x","tags":[1,2],"nested":{"a":null,"b":true}}');
    assert.equal(result.members.empty, false);
  });

  test("an empty object's members are its closing brace", () => {
    for (const text of ["{}", " { \t\n } \r\n"]) {
      const result = decode(text);
      assert.ok(result.ok && result.members !== undefined, text);
      assert.deepEqual([text.slice(result.members.start, result.members.end), result.members.empty], ["}", true]);
    }
  });

  test("json-object: each undecodable value gets its reason", () => {
    const cases: [string | Buffer | null, string][] = [
      ["not json at all", "not_json"],
      ['{"a":1', "not_json"],
      ['{"a":1}}', "not_json"],
      ['{"a":1} {"b":2}', "not_json"],
      ['{"a":"tab\tinside"}', "not_json"],
      ["", "not_json"],
      [null, "not_json"],
      [Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), "invalid_utf8"],
      [Buffer.from([0xc3, 0x28]), "invalid_utf8"],
      ["[1,2,3]", "not_object"],
      ['[{"a":1}]', "not_object"],
      ["null", "not_object"],
      ["42", "not_object"],
      ['"text"', "not_object"],
      ["x".repeat(1025), "too_large"],
    ];
    for (const [value, reason] of cases) {
      const result = decode(value);
      assert.equal(result.ok, false, `expected ${reason} for ${String(value).slice(0, 20)}`);
      if (!result.ok) assert.equal(result.reason, reason, `value ${String(value).slice(0, 20)}: ${result.detail}`);
    }
  });

  test("text: any UTF-8 text is a row; only size, UTF-8 and tombstones are refused", () => {
    for (const text of ["not json at all", "[1,2]", "", '{"a":', "tab\tand\nnewline \\ \"quotes\" Пример"]) {
      const result = decode(text, "text");
      assert.ok(result.ok, text);
      assert.deepEqual([result.text, result.members], [text, undefined]);
    }
    const refused: [string | Buffer | null, string][] = [
      [Buffer.from([0xc3, 0x28]), "invalid_utf8"],
      ["x".repeat(1025), "too_large"],
      [null, "not_json"],
    ];
    for (const [value, reason] of refused) {
      const result = decode(value, "text");
      assert.ok(!result.ok);
      assert.equal(result.reason, reason);
    }
  });

  test("too_large is decided before anything else: a huge invalid value is never read", () => {
    for (const mode of ["json-object", "text"] as const) {
      const result = decodeMessageValue(Buffer.alloc(5 * 1024 * 1024, 0xff), mode, { maxMessageBytes: 1024 * 1024 });
      assert.ok(!result.ok);
      assert.equal(result.reason, "too_large");
      assert.equal(result.bytes, 5 * 1024 * 1024);
    }
  });

  test("a UTF-8 object with non-ASCII text decodes", () => {
    const result = decode('{"title":"Пример — ✓ 😀"}');
    assert.ok(result.ok);
    assert.equal(result.text, '{"title":"Пример — ✓ 😀"}');
  });
});

/** A random JSON text: nested values, every string escape, number forms, random whitespace. */
function randomJson(random: () => number, depth: number): string {
  const ws = () => [" ", "", "", "\n", "\t", "\r\n  "][randomInt(random, 6)] ?? "";
  const kind = randomInt(random, depth > 3 ? 4 : 7);
  switch (kind) {
    case 0:
      return ["true", "false", "null"][randomInt(random, 3)] ?? "null";
    case 1:
      return ["0", "-0", "12", "-7.25", "1e5", "2E-3", "6.02e+23", "18446744073709551615", "0.5"][randomInt(random, 9)] ?? "0";
    case 2:
    case 3: {
      const parts = ["a", "Пример", "😀", "\\n", '\\"', "\\\\", "\\/", "\\u00e9", "\\uD83D\\uDE00", "\\b\\f\\r\\t", " ", "x y"];
      let s = "";
      for (let k = randomInt(random, 4); k > 0; k--) s += parts[randomInt(random, parts.length)] ?? "";
      return `"${s}"`;
    }
    case 4:
    case 5: {
      const members = Array.from({ length: randomInt(random, 4) }, (_, k) => `${ws()}"k${k}"${ws()}:${ws()}${randomJson(random, depth + 1)}${ws()}`);
      return `{${members.join(",")}${members.length === 0 ? ws() : ""}}`;
    }
    default: {
      const items = Array.from({ length: randomInt(random, 4) }, () => `${ws()}${randomJson(random, depth + 1)}${ws()}`);
      return `[${items.join(",")}]`;
    }
  }
}

/** A small random edit: the kind of damage that tells a strict parser from a lenient one. */
function mutate(random: () => number, text: string): string {
  const at = randomInt(random, text.length + 1);
  const insert = ["{", "}", "[", "]", ",", ":", '"', "\\", "-", "+", ".", "e", "0", "1", "t", "n", "\t", "\u0001", "x", " ", "u", "\\u12"][randomInt(random, 22)] ?? "";
  switch (randomInt(random, 4)) {
    case 0:
      return text.slice(0, at) + text.slice(at + 1);
    case 1:
      return text.slice(0, at) + insert + text.slice(at);
    case 2:
      return text.slice(0, at) + insert + text.slice(at + 1);
    default:
      return text.slice(0, at);
  }
}

function byteCheckAccepts(text: string): boolean {
  const bytes = Buffer.from(text, "utf8");
  const start = skipJsonWhitespace(bytes, 0);
  const end = jsonValueEnd(bytes, start);
  return end >= 0 && skipJsonWhitespace(bytes, end) === bytes.length;
}

function jsonParseAccepts(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe("the byte-level JSON check", () => {
  test("property: it agrees with JSON.parse on 20,000 random texts, half of them damaged", () => {
    const random = seededRandom(11);
    let valid = 0;
    for (let n = 0; n < 20_000; n++) {
      let text = randomJson(random, 0);
      if (n % 2 === 1) for (let k = 1 + randomInt(random, 2); k > 0; k--) text = mutate(random, text);
      const expected = jsonParseAccepts(text);
      if (expected) valid++;
      assert.equal(byteCheckAccepts(text), expected, `case ${n}: ${JSON.stringify(text)}`);
    }
    assert.ok(valid > 10_000 && valid < 19_000, `a fair mix of valid and invalid texts (${valid} valid)`);
  });

  test("edge cases JSON.parse refuses are refused", () => {
    for (const text of ["01", "1.", ".5", "-", "1e", "+1", "tru", "nul", "[1,]", '{"a":1,}', '{"a"}', '{"a" 1}', "{1:2}", '"\\x"', '"\\u12g4"', '"a', "[", "]", "{", "", " ", "\u00a01", "1 2", "NaN", "Infinity"]) {
      assert.equal(byteCheckAccepts(text), false, JSON.stringify(text));
      assert.equal(jsonParseAccepts(text), false, JSON.stringify(text));
    }
  });

  test("deep nesting is checked without recursion", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    assert.equal(byteCheckAccepts(deep), true);
    assert.equal(byteCheckAccepts(deep.slice(1)), false);
  });
});

describe("shape limits (the shapes a ClickHouse server dies or stalls on)", () => {
  const shapeLimits = { maxDepth: 5, maxFields: 6, maxKeyBytes: 8, maxStringBytes: 10, maxNumberChars: 4 };
  const shaped = (text: string) => decodeMessageValue(Buffer.from(text), "json-object", { maxMessageBytes: 1 << 20, shapeLimits });
  const objects = (n: number) => `${'{"a":'.repeat(n - 1)}{}${"}".repeat(n - 1)}`;
  const arrays = (n: number) => `{"a":${"[".repeat(n - 1)}1${"]".repeat(n - 1)}}`;
  const fields = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":{}`).join(",")}}`;
  const nestedFields = (n: number) => `{"a":{${Array.from({ length: n - 1 }, (_, i) => `"k${i}":1`).join(",")}}}`;
  // [what, value of size n, the limit, the next size a value can have (escapes and é come whole), reason]
  const cases: [string, (n: number) => string, number, number, string][] = [
    ["objects nested", objects, 5, 6, "too_deep"],
    ["arrays nested in a field", arrays, 5, 6, "too_deep"],
    ["fields at the top", fields, 6, 7, "too_many_fields"],
    ["fields at every level", nestedFields, 6, 7, "too_many_fields"],
    ["a key's bytes", (n) => `{"${"k".repeat(n)}":1}`, 8, 9, "key_too_long"],
    ["a key's bytes as written (escapes count)", (n) => `{"${"\\u0041".repeat(n / 6)}":1}`, 6, 12, "key_too_long"],
    ["a string's bytes", (n) => `{"s":"${"é".repeat(n / 2)}"}`, 10, 12, "string_too_long"],
    ["a string in an array", (n) => `{"s":["${"x".repeat(n)}"]}`, 10, 11, "string_too_long"],
    ["a number's characters", (n) => `{"n":${"9".repeat(n)}}`, 4, 5, "number_too_long"],
    ["a number's characters with sign and exponent", (n) => `{"n":-${"1".repeat(n - 3)}e1}`, 4, 5, "number_too_long"],
  ];
  for (const [what, make, limit, over, reason] of cases) {
    test(`${what}: ${limit} is a row, ${over} is ${reason}`, () => {
      const at = shaped(make(limit));
      assert.ok(at.ok, `${make(limit)}: ${at.ok ? "" : `${at.reason} ${at.detail}`}`);
      const past = shaped(make(over));
      assert.equal(past.ok, false, make(over));
      if (!past.ok) assert.equal(past.reason, reason, past.detail);
    });
  }

  test("defaults: the 50,000-deep object of issue 21 is too_deep; a contract hit's shape is a row", () => {
    const deep = `{"WatchID":1,"x":${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}}`;
    const result = decodeMessageValue(Buffer.from(deep), "json-object", { maxMessageBytes: 1 << 20 });
    assert.equal(result.ok ? "row" : result.reason, "too_deep");
    if (!result.ok) assert.equal(result.detail, "1001, over maxDepth 1000");
    const atLimit = `{"x":${'{"a":'.repeat(998)}[1]${"}".repeat(998)}}`;
    assert.ok(decodeMessageValue(Buffer.from(atLimit), "json-object", { maxMessageBytes: 1 << 20 }).ok);
  });

  test("the config's defaults are decode's defaults", () => {
    assert.deepEqual({ ...compileLoaderConfig().shapeLimits }, { ...DEFAULT_SHAPE_LIMITS });
    assert.throws(() => compileLoaderConfig({ shapeLimits: { maxDepth: 29_000 } }), /maxDepth/);
  });

  test("text mode does not look at shapes", () => {
    assert.ok(decodeMessageValue(Buffer.from(arrays(50)), "text", { maxMessageBytes: 1 << 20, shapeLimits }).ok);
  });
});
