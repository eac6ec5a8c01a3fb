// Message decoding: every verdict, exact integers, and the serialiser writing them back unchanged.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { decodeMessageValue } from "../../src/loader/decode.ts";
import { parseJsonLossless, stringifyJsonLossless } from "../../src/loader/json-lossless.ts";

const limits = { maxMessageBytes: 1024 };
const decode = (text: string | Buffer) => decodeMessageValue(typeof text === "string" ? Buffer.from(text) : text, limits);

describe("decodeMessageValue", () => {
  test("a JSON object is a row, its numbers typed", () => {
    const text = '{"id":42,"price":19.5,"name":"x","tags":[1,2],"nested":{"a":null,"b":true}}';
    const result = decode(text);
    assert.ok(result.ok);
    assert.deepEqual(result.row, { id: 42, price: 19.5, name: "x", tags: [1, 2], nested: { a: null, b: true } });
    assert.equal(result.bytes, Buffer.byteLength(text));
  });

  test("each undecodable value gets its reason", () => {
    const cases: [string | Buffer | null, string][] = [
      ["not json at all", "not_json"],
      ['{"a":1', "not_json"],
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
      const result = decodeMessageValue(typeof value === "string" ? Buffer.from(value) : value, limits);
      assert.equal(result.ok, false, `expected ${reason} for ${String(value).slice(0, 20)}`);
      if (!result.ok) assert.equal(result.reason, reason, `value ${String(value).slice(0, 20)}: ${result.detail}`);
    }
  });

  test("too_large is decided before parsing: a huge value is never decoded", () => {
    const result = decodeMessageValue(Buffer.alloc(5 * 1024 * 1024, 0xff), { maxMessageBytes: 1024 * 1024 });
    assert.ok(!result.ok);
    assert.equal(result.reason, "too_large");
    assert.equal(result.bytes, 5 * 1024 * 1024);
  });

  test("a UTF-8 object with non-ASCII text decodes", () => {
    const result = decode('{"title":"Пример — ✓ 😀"}');
    assert.ok(result.ok);
    assert.equal(result.row.title, "Пример — ✓ 😀");
  });
});

describe("exact integers", () => {
  test("integers beyond 2^53 become bigint, safe ones stay numbers, floats stay floats", () => {
    const row = parseJsonLossless('{"u64":18446744073709551615,"neg":-9223372036854775808,"edge":9007199254740993,"safe":9007199254740991,"f":1.5,"e":1e300,"big_float":12345678901234567890.5,"s":"12345678901234567890"}');
    assert.deepEqual(row, {
      u64: 18446744073709551615n,
      neg: -9223372036854775808n,
      edge: 9007199254740993n,
      safe: 9007199254740991,
      f: 1.5,
      e: 1e300,
      big_float: Number("12345678901234567890.5"),
      s: "12345678901234567890",
    });
  });

  test("digits inside strings, escaped quotes and nested arrays are left alone", () => {
    const text = '{"a":"x\\"12345678901234567890\\"","b":[12345678901234567890,{"c":[-18446744073709551615]}]}';
    assert.deepEqual(parseJsonLossless(text), { a: 'x"12345678901234567890"', b: [12345678901234567890n, { c: [-18446744073709551615n] }] });
  });

  test("invalid JSON stays invalid after marking (leading zeros, keys, junk between tokens)", () => {
    for (const text of ["[0012345678901234567890]", "[1 12345678901234567890]", "{12345678901234567890:1}", "{\"a\":1,12345678901234567890:2}", "[\"x\" 12345678901234567890]", "[12345678901234567890"]) {
      assert.throws(() => parseJsonLossless(text), SyntaxError, text);
    }
  });

  test("stringify writes bigints as bare digits and round-trips", () => {
    const text = '{"id":18446744073709551615,"list":[9007199254740993,1,2.5],"name":"n","raw":"\\u0000bigint:fake:1"}';
    const value = parseJsonLossless(text);
    assert.equal(stringifyJsonLossless(value), text.replace("\\u0000", "\\u0000"));
    assert.deepEqual(parseJsonLossless(stringifyJsonLossless(value)), value);
  });

  test("a producer cannot forge a bigint with a marker-like string", () => {
    const value = parseJsonLossless('{"a":"\\u0000bigint:00:123","b":12345678901234567890}');
    assert.deepEqual(value, { a: "\u0000bigint:00:123", b: 12345678901234567890n });
  });
});
