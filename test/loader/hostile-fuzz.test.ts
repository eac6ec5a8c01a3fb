// Issue 21 item 6: property-based hostile messages through the loader into a ClickHouse 18.16 of
// this test's own (private-clickhouse.ts; a message that slipped past the limits may kill a server,
// so never a shared stand node): depth, width, huge and odd numbers, Unicode edge cases (lone
// surrogates, noncharacters, BOM, astral), control bytes raw and escaped, duplicate keys, wrong
// types for every column, empty and enormous fields, invalid UTF-8. After each run the server has
// not died and every message is exactly one row or one dead letter. FC_SEED=<n> reproduces a run.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { processEnv } from "../../src/config/stand.ts";
import { ClickHouseRowInserter, qualifiedTable } from "../../src/loader/clickhouse-sink.ts";
import { ClickHouseDeadLetterSink, deadLetterTableDdl } from "../../src/loader/dead-letters.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import { hitsRouter } from "../../src/loader/world-loader.ts";
import { startPrivateClickHouse, type PrivateClickHouse } from "../../testkit/stand/private-clickhouse.ts";

const COLUMNS = ["WatchID", "ClientID", "VisitID", "CounterID", "EventDate", "UTCEventTime", "EventType", "URL", "Title", "GoalsReached", "productID", "productPrice", "ecommerce", "_raw", "kafka_offset"];
const BASE = '"WatchID":1,"ClientID":2,"EventType":"pageview"';

const repeat = (text: string, n: number) => text.repeat(n);
const oddText = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("\u0000", "\u001f\u007f", "\ufeff", "\ufffe\uffff", "\u{10ffff}", "\u{1f600}", "e\u0301", "\u2028\u2029", "\\", '"'),
);
// Lone surrogates and odd escapes can only be written as escapes in UTF-8 JSON.
const escapes = fc.array(fc.constantFrom("\\ud800", "\\udfff", "\\ud83d\\ude00", "\\u0000", "\\u001f", "\\b\\f\\n\\r\\t", "\\/", "\\\\", '\\"', "\\uFFFF"), { maxLength: 30 }).map((parts) => parts.join(""));
const oddNumber = fc.oneof(
  fc.constantFrom("-0", "0.0", "1e308", "1e309", "-1e-400", "9007199254740993", "18446744073709551616", "1E+2", "0e0", "123456789012345678901234567890"),
  fc.integer({ min: 1, max: 2000 }).map((n) => `1${"0".repeat(n)}`),
  fc.integer({ min: 1, max: 2000 }).map((n) => `0.${"9".repeat(n)}e-${n}`),
);
const wrongValue = fc.oneof(fc.constantFrom("null", "true", "{}", "[]", '""', '"abc"', "[[1]]", '{"a":1}', "[null]", '["x",1]', "-1"), oddNumber, oddText.map((t) => JSON.stringify(t)));

type Shape = [name: string, value: Buffer];
const text = (name: string) => (value: string): Shape => [name, Buffer.from(value, "utf8")];

const hostile: fc.Arbitrary<Shape> = fc.oneof(
  fc.integer({ min: 1, max: 60_000 }).chain((n) => fc.constantFrom(`{${BASE},"x":${repeat('{"a":', n)}1${repeat("}", n)}}`, `{${BASE},"x":${repeat("[", n)}1${repeat("]", n)}}`, `{${BASE},"x":${repeat('[{"a":', n >> 1)}1${repeat("}]", n >> 1)}}`, `{${BASE},"GoalsReached":${repeat("[", n)}${repeat("]", n)}}`)).map(text("deep")),
  fc.integer({ min: 1, max: 40_000 }).map((n) => `{${BASE}${Array.from({ length: n }, (_, i) => `,"k${i}":{}`).join("")}}`).map(text("wide")),
  fc.integer({ min: 1, max: 5000 }).map((n) => `{${BASE},"x":[${repeat("1,", n)}1]}`).map(text("long_array")),
  fc.integer({ min: 1, max: 400_000 }).map((n) => `{${BASE},"${"k".repeat(n)}":1}`).map(text("long_key")),
  fc.integer({ min: 1, max: 400_000 }).chain((n) => fc.constantFrom("URL", "x", "ecommerce").map((f) => `{${BASE},"${f}":"${"s".repeat(n)}"}`)).map(text("long_string")),
  fc.integer({ min: 1, max: 3000 }).map((n) => `{"WatchID":${"9".repeat(n)},"ClientID":2}`).map(text("long_number")),
  fc.tuple(fc.constantFrom(...COLUMNS), wrongValue).map(([c, v]) => `{${BASE},"${c}":${v}}`).map(text("wrong_type")),
  fc.tuple(fc.constantFrom(...COLUMNS), oddNumber).map(([c, v]) => `{"${c}":${v}}`).map(text("odd_number")),
  fc.tuple(oddText, oddText).map(([k, v]) => `{${BASE},${JSON.stringify(k)}:${JSON.stringify(v)},"URL":${JSON.stringify(v)}}`).map(text("unicode")),
  escapes.map((e) => `{${BASE},"URL":"${e}","${e}":"${e}"}`).map(text("escapes")),
  fc.array(fc.integer({ min: 0, max: 31 }), { minLength: 1, maxLength: 8 }).map((cs) => `{${BASE},"URL":"${String.fromCharCode(...cs)}"}`).map(text("raw_control")),
  fc.tuple(fc.constantFrom("WatchID", "URL", "x", "_raw", "kafka_offset"), fc.integer({ min: 2, max: 500 })).map(([k, n]) => `{${BASE}${`,"${k}":1`.repeat(n)}}`).map(text("duplicate_keys")),
  fc.constantFrom("", " ", "{}", "[]", "null", '{"":""}', "{", "}", '{"a":1,}', "\ufeff{}", "{}{}", '{"WatchID":1}\n{"WatchID":2}').map(text("empty_or_broken")),
  fc.integer({ min: 1, max: 3 }).map((n) => `{${BASE},"x":"${"e".repeat(1024 * 1024 * n)}"}`).map(text("enormous")),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes): Shape => ["bytes", Buffer.concat([Buffer.from(`{${BASE},"URL":"`), Buffer.from(bytes), Buffer.from('"}')])]),
  fc.integer({ min: 1, max: 9999 }).map((n) => `{"WatchID":${n},"ClientID":${n},"EventType":"pageview","URL":"https://x/${n}"}`).map(text("good")),
);

describe("hostile messages through the loader (fast-check, a private 18.16)", () => {
  let ch: PrivateClickHouse;
  let run = 0;

  before(async () => {
    ch = await startPrivateClickHouse();
    await ch.client.command({ query: "CREATE DATABASE fuzz" });
  });

  after(async () => {
    await ch.stop();
  });

  test("every node alive, every message a row or a dead letter, counted", async () => {
    const seed = processEnv.fuzzSeed ?? Date.now() % 2 ** 31;
    const landing = readFileSync(new URL("../../sql/ddl/90-hits-ingest.sql", import.meta.url), "utf8");
    const columns = /CREATE TABLE IF NOT EXISTS stg\.hits_in ON CLUSTER \{\{cluster\}\}\n(\([\s\S]*?\n\))\nENGINE = Null;/.exec(landing)?.[1] ?? "";
    const shapes = new Map<string, number>();
    let messages = 0;
    console.log(`fuzz seed ${seed} (FC_SEED=${seed} reproduces it)`);
    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { minLength: 20, maxLength: 60 }), async (batch) => {
        run++;
        const hits = qualifiedTable("fuzz", `hits_${run}`);
        const letters = qualifiedTable("fuzz", `dead_letters_${run}`);
        await ch.client.command({ query: `CREATE TABLE ${hits}\n${columns}\nENGINE = MergeTree ORDER BY tuple()` });
        await ch.client.command({ query: deadLetterTableDdl(letters) });
        const core = new LoaderCore({
          config: compileLoaderConfig({ flush: { maxRows: 20_000 }, killsServer: { nodeBackPollMs: 100 } }),
          inserter: new ClickHouseRowInserter(ch.client, { input_format_skip_unknown_fields: 1, insert_deduplicate: 0 }),
          deadLetters: new ClickHouseDeadLetterSink(ch.client, letters),
          commit: () => Promise.resolve(),
          decodeMode: "json-object",
          route: hitsRouter(["private"], hits),
        });
        batch.forEach(([shape, value], i) => {
          shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
          core.accept({ topic: "fuzz", partition: 0, offset: BigInt(i), key: null, value });
        });
        messages += batch.length;
        for (let n = 0; n < 50 && core.status().unplaced > 0; n++) await core.runCycle({ all: true, ignoreBackoff: true });
        const [placed] = await (await ch.client.query({
          query: `SELECT (SELECT count() FROM ${hits}) AS rows, (SELECT count() FROM ${letters}) AS letters, (SELECT uniqExact(o) FROM (SELECT kafka_offset AS o FROM ${hits} UNION ALL SELECT offset AS o FROM ${letters})) AS offsets`,
          format: "JSONEachRow",
        })).json<{ rows: string; letters: string; offsets: string }>();
        assert.equal(ch.deaths(), 0, "the server died");
        assert.ok(await ch.answers(), "the server does not answer");
        assert.equal(core.status().unplaced, 0, "messages left unplaced");
        assert.equal(Number(placed?.rows) + Number(placed?.letters), batch.length, `rows + dead letters ≠ messages: ${JSON.stringify(placed)}`);
        assert.equal(Number(placed?.offsets), batch.length, "some offset is missing or doubled");
      }),
      { seed, numRuns: 20, endOnFailure: true },
    );
    console.log(`fuzz seed ${seed}: ${messages} messages in ${run} runs, ${shapes.size} shapes: ${[...shapes].map(([s, n]) => `${s} ${n}`).join(", ")}`);
  });
});
