// The splice route's lines: leading fields, then the original members byte for byte; the byte-level
// JSON string escaper giving exactly JSON.stringify's bytes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_SHAPE_LIMITS, decodeMessageValue, type DecodeMode } from "../../src/loader/decode.ts";
import { jsonStringMaxBytes, writeJsonString } from "../../src/loader/json-bytes.ts";
import { SpliceLineWriter, type LeadingFields } from "../../src/loader/splice.ts";
import { randomInt, seededRandom } from "../../testkit/loader-support.ts";

function spliced(text: string, fields: (text: string) => LeadingFields, mode: DecodeMode = "json-object", writer = new SpliceLineWriter()): string {
  const value = Buffer.from(text, "utf8");
  const decoded = decodeMessageValue(value, mode, { maxMessageBytes: 10 * 1024 * 1024, shapeLimits: { ...DEFAULT_SHAPE_LIMITS, maxStringBytes: 10 * 1024 * 1024 } });
  assert.ok(decoded.ok, text);
  return writer.line("t", value, decoded.text, decoded.members, fields(decoded.text)).toString("utf8");
}

const hitFields = (text: string): LeadingFields => ({ _raw: text, kafka_topic: "hits", kafka_partition: 0, kafka_offset: 123n });

describe("SpliceLineWriter", () => {
  test("json-object: `{`, the leading fields, then the original members after the brace", () => {
    const text = '{"WatchID":18446744073709551615,"f":1.0,"e":1e3,"URL":"https://x/?a=\\"b\\"","t":"Пример"}';
    const line = spliced(text, hitFields);
    assert.equal(line, `{"_raw":${JSON.stringify(text)},"kafka_topic":"hits","kafka_partition":0,"kafka_offset":123,${text.slice(1)}\n`);
    assert.match(line, /"WatchID":18446744073709551615,"f":1.0,"e":1e3,/, "numbers keep their digits and spelling");
    assert.deepEqual(JSON.parse(line), { ...hitFields(text), kafka_offset: 123, ...(JSON.parse(text) as object) });
  });

  test("whitespace around the object and after its brace is trimmed; inner whitespace kept", () => {
    assert.equal(spliced(' \n{ \t "a" : 1 ,\n "b":[ 2 ] }\r\n ', () => ({ k: 1 })), '{"k":1,"a" : 1 ,\n "b":[ 2 ] }\n');
  });

  test("an empty object gives a valid line with or without leading fields", () => {
    for (const text of ["{}", " {  \n } "]) {
      assert.equal(spliced(text, () => ({ k: "v", n: 2 })), '{"k":"v","n":2}\n');
      assert.equal(spliced(text, () => ({})), "{}\n");
    }
  });

  test("without leading fields the line is the original object", () => {
    const text = '{"id":1,"nested":{"a":[1,{"b":null}]}}';
    assert.equal(spliced(text, () => ({})), `${text}\n`);
  });

  test("text: the line is the leading fields alone, the text a JSON string among them", () => {
    const text = 'not json\t"quoted" \\ back\nslash \u0001 Пример 😀';
    const line = spliced(text, (t) => ({ raw: t, kafka_topic: "orders", kafka_partition: 3, kafka_offset: 9007199254740993n, _load_id: "" }), "text");
    assert.equal(line, `{"raw":${JSON.stringify(text)},"kafka_topic":"orders","kafka_partition":3,"kafka_offset":9007199254740993,"_load_id":""}\n`);
    assert.equal((JSON.parse(line) as { raw: string }).raw, text);
  });

  test("every field type is written as JSON; a number JSON cannot carry is refused", () => {
    assert.equal(spliced("{}", () => ({ s: 'a"b', n: -1.5, i: 7, b: true, f: false, big: -12345678901234567890n, "we\"ird": 0 })), '{"s":"a\\"b","n":-1.5,"i":7,"b":true,"f":false,"big":-12345678901234567890,"we\\"ird":0}\n');
    assert.throws(() => spliced("{}", () => ({ n: Number.NaN })), TypeError);
    assert.throws(() => spliced("{}", () => ({ n: Number.POSITIVE_INFINITY })), TypeError);
  });

  test("a member named like a leading field stays in the line (the server refuses the row: a data dead letter)", () => {
    assert.equal(spliced('{"kafka_topic":"mine","a":1}', hitFields).includes('"kafka_topic":"hits","kafka_partition":0,"kafka_offset":123,"kafka_topic":"mine"'), true);
  });

  test("a message far larger than the scratch buffer, and lines after it, are whole", () => {
    const writer = new SpliceLineWriter();
    const big = JSON.stringify({ s: '"\\'.repeat(200_000), t: "\u0002".repeat(50_000) });
    const line = spliced(big, hitFields, "json-object", writer);
    assert.deepEqual(JSON.parse(line), { ...hitFields(big), kafka_offset: 123, ...(JSON.parse(big) as object) });
    assert.equal(spliced('{"a":1}', () => ({ k: 1 }), "json-object", writer), '{"k":1,"a":1}\n');
  });
});

describe("writeJsonString", () => {
  test("property: the bytes of JSON.stringify for 5,000 random UTF-8 texts (controls, quotes, backslashes, non-ASCII)", () => {
    const random = seededRandom(5);
    const pieces = ['"', "\\", "\n", "\r", "\t", "\b", "\f", "\u0000", "\u0001", "\u001f", "\u007f", " ", "a", "/", "é", "Пример", "😀", "\u2028", "\ufeff"];
    for (let n = 0; n < 5000; n++) {
      let text = "";
      for (let k = randomInt(random, 30); k > 0; k--) text += pieces[randomInt(random, pieces.length)] ?? "";
      const source = Buffer.from(text, "utf8");
      const target = Buffer.alloc(jsonStringMaxBytes(source));
      const end = writeJsonString(source, target, 0);
      assert.equal(target.subarray(0, end).toString("utf8"), JSON.stringify(text), JSON.stringify(text));
    }
  });
});
