// Batch salvage against the real test-stand ClickHouse (18.16, ch1): a batch with planted bad rows
// lands exactly its good rows, and exactly the bad ones (plus the undecodable messages) are in the
// dead-letter table with their offsets, keys, raw bytes and reason codes. Spliced lines (leading
// fields before the original members, or a text as a string field) land exactly as sent.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Registry } from "prom-client";
import { ClickHouseRowInserter, qualifiedTable } from "../../src/loader/clickhouse-sink.ts";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { ClickHouseDeadLetterSink, deadLetterTableDdl } from "../../src/loader/dead-letters.ts";
import { LoaderCore, type DecodeMode, type SpliceRouter } from "../../src/loader/loader-core.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import type { CommitPoint } from "../../src/loader/offsets.ts";
import type { LoaderMessage } from "../../src/loader/types.ts";
import { createLiveDatabase, type LiveDatabase } from "../../testkit/stand/live-clickhouse.ts";

const topic = "loader_test_salvage";

interface DeadLetterRow {
  topic: string;
  partition: number;
  offset_text: string;
  key: string | null;
  raw_hex: string;
  raw_bytes: number;
  raw_length: string;
  reason: string;
  error_code: number | null;
  target_table: string;
}

describe("salvage on the real ClickHouse", () => {
  let db: LiveDatabase;
  let events: string;
  let deadLetters: string;

  before(async () => {
    db = await createLiveDatabase();
    events = qualifiedTable(db.database, "events");
    deadLetters = qualifiedTable(db.database, "dead_letters");
    await db.client.command({
      query: `CREATE TABLE ${events} (id UInt64, day Date, name String, amount Float64, big UInt64) ENGINE = MergeTree ORDER BY id`,
    });
    await db.client.command({ query: deadLetterTableDdl(deadLetters) });
  });

  after(async () => {
    await db.drop();
  });

  function loader(commits: CommitPoint[][], registry: Registry, table = events, decodeMode: DecodeMode = "json-object", route: SpliceRouter = () => ({ target: { node: "ch1", table }, fields: {} })): LoaderCore {
    return new LoaderCore({
      config: compileLoaderConfig({ maxMessageBytes: 4096, rawCapBytes: 1024, flush: { maxRows: 1000 } }),
      inserter: new ClickHouseRowInserter(db.client),
      deadLetters: new ClickHouseDeadLetterSink(db.client, deadLetters),
      commit: (points) => {
        commits.push([...points]);
        return Promise.resolve();
      },
      decodeMode,
      route,
      metrics: new LoaderMetrics(registry),
    });
  }

  test("good rows land once, bad rows and undecodable messages are dead-lettered with their reasons", async () => {
    const good = (id: number) => `{"id":${id},"day":"2026-01-0${1 + (id % 9)}","name":"row ${id}","amount":${id}.25,"big":${18446744073709551615n - BigInt(id)}}`;
    const planted = new Map<number, { value: Buffer; reason: string; code: number | null }>([
      [3, { value: Buffer.from('{"id":"abc","day":"2026-01-01"}'), reason: "cannot_parse_input_assertion_failed", code: 27 }],
      [11, { value: Buffer.from('{"id":11,"day":"not-a-date"}'), reason: "cannot_parse_input_assertion_failed", code: 27 }],
      [12, { value: Buffer.from('{"id":-12}'), reason: "cannot_parse_number", code: 72 }],
      [20, { value: Buffer.from('{"id":20,"unknown_column":1}'), reason: "incorrect_data", code: 117 }],
      [21, { value: Buffer.from('{"id":21,"name":{"nested":true}}'), reason: "cannot_parse_quoted_string", code: 26 }],
      [30, { value: Buffer.from("this is not json\tat all\n"), reason: "not_json", code: null }],
      [31, { value: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x5c, 0x09, 0x0a, 0x00, 0x22, 0x7d]), reason: "invalid_utf8", code: null }],
      [32, { value: Buffer.from('[{"id":32}]'), reason: "not_object", code: null }],
      [33, { value: Buffer.from(`{"id":33,"name":"${"x".repeat(5000)}"}`), reason: "too_large", code: null }],
    ]);
    const total = 40;
    const messages: LoaderMessage[] = [];
    for (let offset = 0; offset < total; offset++) {
      const value = planted.get(offset)?.value ?? Buffer.from(good(offset));
      messages.push({ topic, partition: offset % 2, offset: BigInt(offset), key: Buffer.from(`k${offset}`), value });
    }
    const commits: CommitPoint[][] = [];
    const registry = new Registry();
    const core = loader(commits, registry);
    for (const message of messages) core.accept(message);
    const report = await core.runCycle({ all: true });

    assert.equal(report.rowsLanded, total - planted.size, JSON.stringify(report.heldBy));
    assert.equal(report.deadLettersWritten, planted.size);
    assert.equal(report.rowsHeld, 0);
    // one commit for the cycle: partition 0 held the even offsets 0–38, partition 1 the odd 1–39
    assert.deepEqual(commits, [[{ topic, partition: 0, offset: 39n }, { topic, partition: 1, offset: 40n }]]);

    const landed = await db.query<{ id: string; big: string; amount: number }>(`SELECT id, big, amount FROM ${events} ORDER BY id`);
    const expectedIds = messages.map((m) => Number(m.offset)).filter((o) => !planted.has(o));
    assert.deepEqual(landed.map((r) => Number(r.id)), expectedIds, "exactly the good rows, once each");
    assert.deepEqual(landed.map((r) => r.big), expectedIds.map((id) => String(18446744073709551615n - BigInt(id))), "UInt64 values beyond 2^53 land exactly");
    assert.deepEqual(landed.map((r) => r.amount), expectedIds.map((id) => id + 0.25));

    const letters = await db.query<DeadLetterRow>(
      `SELECT topic, partition, toString(offset) AS offset_text, key, hex(raw) AS raw_hex, raw_bytes, toString(length(raw)) AS raw_length, reason, error_code, target_table FROM ${deadLetters} ORDER BY offset`,
    );
    assert.deepEqual(letters.map((l) => Number(l.offset_text)), [...planted.keys()].sort((a, b) => a - b));
    for (const letter of letters) {
      const plant = planted.get(Number(letter.offset_text));
      assert.ok(plant !== undefined);
      const capped = plant.value.subarray(0, 1024);
      assert.deepEqual(
        { topic: letter.topic, partition: letter.partition, key: letter.key, reason: letter.reason, code: letter.error_code, raw: letter.raw_hex, bytes: letter.raw_bytes, length: Number(letter.raw_length) },
        { topic, partition: Number(letter.offset_text) % 2, key: `k${letter.offset_text}`, reason: plant.reason, code: plant.code, raw: capped.toString("hex").toUpperCase(), bytes: plant.value.length, length: capped.length },
        `dead letter at offset ${letter.offset_text}`,
      );
      assert.equal(letter.target_table, plant.code === null ? "" : `ch1:${events}`);
    }
    assert.match(await registry.getSingleMetricAsString("loader_dead_letters_total"), /reason="too_large"} 1/);
  });

  test("an unknown table is a schema fault: the batch is held, nothing is dead-lettered or committed", async () => {
    const commits: CommitPoint[][] = [];
    const core = loader(commits, new Registry(), qualifiedTable(db.database, "no_such_table"));
    core.accept({ topic, partition: 5, offset: 100n, key: null, value: Buffer.from('{"id":1}') });
    const report = await core.runCycle({ all: true });
    assert.equal(report.rowsHeld, 1);
    assert.deepEqual(report.heldBy.map((r) => [r.kind, r.code]), [["schema", 60]]);
    assert.deepEqual(commits, []);
    assert.equal(report.gate.down, false, "the sink answers: not a sink-down");
    assert.ok(report.gate.retryAt > 0, "but the next try waits for a backoff");
    const dead = await db.query<{ n: string }>(`SELECT count() AS n FROM ${deadLetters} WHERE partition = 5`);
    assert.equal(dead[0]?.n, "0");
  });

  test("spliced lines: leading fields, whitespace and escapes land exactly; a duplicate field is a data dead letter", async () => {
    const spliced = qualifiedTable(db.database, "spliced");
    await db.client.command({ query: `CREATE TABLE ${spliced} (id UInt64, lead String, name String, big UInt64) ENGINE = MergeTree ORDER BY id` });
    const values = [
      '{\n  "id": 1,\n  "name": "a\\"b\\\\c\\/d\\u00e9\\n\\t\\b\\f\\u0001😀",\n  "big": 18446744073709551615\n}\n',
      " { } ",
      '{"id":3,"lead":"mine"}',
      '{"id":4,"name":"Пример — ✓"}',
    ];
    const commits: CommitPoint[][] = [];
    const core = loader(commits, new Registry(), spliced, "json-object", (message) => ({ target: { node: "ch1", table: spliced }, fields: { lead: `p${message.partition}` } }));
    values.forEach((value, offset) => core.accept({ topic, partition: 7, offset: BigInt(offset), key: null, value: Buffer.from(value) }));
    const report = await core.runCycle({ all: true });
    assert.deepEqual([report.rowsLanded, report.deadLettersWritten, report.rowsHeld], [3, 1, 0]);
    assert.deepEqual(commits, [[{ topic, partition: 7, offset: 4n }]]);
    const rows = await db.query<{ id: string; lead: string; name: string; big: string }>(`SELECT id, lead, name, big FROM ${spliced} ORDER BY id`);
    assert.deepEqual(rows, [
      { id: "0", lead: "p7", name: "", big: "0" },
      { id: "1", lead: "p7", name: 'a"b\\c/d\u00e9\n\t\b\f\u0001😀', big: "18446744073709551615" },
      { id: "4", lead: "p7", name: "Пример — ✓", big: "0" },
    ]);
    const letters = await db.query<{ offset: string; reason: string; error_code: number }>(`SELECT toString(offset) AS offset, reason, error_code FROM ${deadLetters} WHERE partition = 7`);
    assert.deepEqual(letters, [{ offset: "2", reason: "incorrect_data", error_code: 117 }]);
  });

  test("text mode: any UTF-8 text lands byte for byte in a string field; invalid UTF-8 is a dead letter", async () => {
    const texts = qualifiedTable(db.database, "texts");
    await db.client.command({ query: `CREATE TABLE ${texts} (raw String, kafka_topic String, kafka_partition UInt32, kafka_offset UInt64) ENGINE = MergeTree ORDER BY kafka_offset` });
    const values = [
      Buffer.from('{"order_id": 1, "amount": "12.50"}'),
      Buffer.from("not json\tat all\r\n\"quoted\" \\ back\\slash \u0000\u0001\u001f Пример 😀"),
      Buffer.from(""),
      Buffer.from([0x7b, 0xff, 0x7d]),
    ];
    const commits: CommitPoint[][] = [];
    const core = loader(commits, new Registry(), texts, "text", (message, text) => ({
      target: { node: "ch1", table: texts },
      fields: { raw: text, kafka_topic: message.topic, kafka_partition: message.partition, kafka_offset: message.offset },
    }));
    values.forEach((value, offset) => core.accept({ topic, partition: 8, offset: BigInt(offset), key: null, value }));
    const report = await core.runCycle({ all: true });
    assert.deepEqual([report.rowsLanded, report.deadLettersWritten], [3, 1]);
    const rows = await db.query<{ raw_hex: string; kafka_topic: string; kafka_partition: number; kafka_offset: string }>(
      `SELECT hex(raw) AS raw_hex, kafka_topic, kafka_partition, toString(kafka_offset) AS kafka_offset FROM ${texts} ORDER BY kafka_offset`,
    );
    assert.deepEqual(rows, values.slice(0, 3).map((value, offset) => ({ raw_hex: value.toString("hex").toUpperCase(), kafka_topic: topic, kafka_partition: 8, kafka_offset: String(offset) })));
    const letters = await db.query<{ reason: string }>(`SELECT reason FROM ${deadLetters} WHERE partition = 8`);
    assert.deepEqual(letters, [{ reason: "invalid_utf8" }]);
  });
});
