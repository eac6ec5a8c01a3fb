// The dynamic insert against the real test-stand ClickHouse (18.16, ch1), in a database of its own:
// - property: the same messages (generator hits and every awkward shape of value) give identical
//   rows and identical dead letters through RowBinary and through JSONEachRow;
// - a column added while a stream lands is filled from the next batch on, nothing lost, no dead letter;
//   a column dropped between encoding and INSERT (by construction: the inserter drops it just
//   before its first RowBinary INSERT) makes the rows stale, re-encoded and landed;
// - capture modes: raw_only keeps the message byte for byte, extracted_only keeps none, a DDL
//   declaration beats config, and full is refused at start naming the table;
// - the default table takes a batch held because its table was dropped.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Registry } from "prom-client";
import { ClickHouseRowInserter, qualifiedTable, type RowInserter } from "../../src/loader/clickhouse-sink.ts";
import { compileLoaderConfig, type LoaderConfigInput } from "../../src/config/loader.ts";
import { ClickHouseDeadLetterSink, deadLetterTableDdl } from "../../src/loader/dead-letters.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import { hitsRouter } from "../../src/loader/routes.ts";
import { checkTargets } from "../../src/loader/table-schema.ts";
import type { LoaderMessage, LoaderTarget } from "../../src/loader/types.ts";
import { createLiveDatabase, type LiveDatabase } from "../../testkit/stand/live-clickhouse.ts";
import { randomInt, seededRandom, worldLandingDdl } from "../../testkit/loader-support.ts";

const topic = "loader_test_insert_path";
const SETTINGS = { input_format_skip_unknown_fields: 1, insert_deduplicate: 0 } as const;


/** A generator-like hit, then one awkward value planted in it (or none). */
function awkwardHit(random: () => number, n: number): string {
  const hit: Record<string, unknown> = {
    WatchID: 1_000_000_000_000 + n,
    VisitID: 77 + (n % 13),
    ClientID: 5_000 + (n % 97),
    CounterID: 57260601,
    EventDate: "2026-06-01",
    UTCEventTime: "2026-05-31T20:00:23Z",
    ClientTimeZone: 180,
    EventType: ["pageview", "add_to_cart", "purchase"][n % 3],
    Sign: 1,
    URL: `https://shop.stand.example/p/${n}`,
    Title: "Home | Stand Shop",
    ScreenWidth: 360,
    GoalsReached: n % 4 === 0 ? [1, 2] : [],
    purchaseRevenue: n % 3 === 2 ? [1234.56, 0.1] : [],
    productName: n % 3 === 2 ? ["Чайник", "mug \"big\""] : [],
  };
  const plants: (() => void)[] = [
    () => (hit.WatchID = String(hit.WatchID)), // a quoted number
    () => (hit.VisitID = null),
    () => (hit.ClientID = ""),
    () => (hit.CounterID = 1.5),
    () => (hit.ScreenWidth = -3),
    () => (hit.Sign = 9007199254740993n),
    () => (hit.ClientTimeZone = 1e300),
    () => (hit.WatchID = 0.1 + 0.2),
    () => (hit.Title = "emoji 😀 and \u0000 nul"),
    () => (hit.Title = { nested: true }),
    () => (hit.URL = true),
    () => (hit.GoalsReached = ["1", 2]),
    () => (hit.purchaseRevenue = [null]),
    () => (hit.unknown_field = { deep: [1, { a: "b" }] }),
    () => (hit.EventType = 12),
    () => (hit.kafka_offset = 5), // a member named like a leading field
  ];
  if (random() < 0.2) plants[randomInt(random, plants.length)]?.();
  let text = JSON.stringify(hit, (_k, v: unknown) => (typeof v === "bigint" ? `__big${v}__` : v)).replace(/"__big(\d+)__"/g, "$1");
  // escapes the serializer would not write: an escaped key, a lone surrogate, a surrogate pair
  const r = random();
  if (r < 0.05) text = text.replace('"Title"', '"\\u0054itle"');
  else if (r < 0.1) text = text.replace('"Home | Stand Shop"', '"\\ud800 lone"');
  else if (r < 0.15) text = text.replace('"Home | Stand Shop"', '"\\ud83d\\ude00 pair"');
  else if (r < 0.2) text = text.replace(`"WatchID":${1_000_000_000_000 + n}`, `"WatchID":${1_000_000_000_000 + n},"WatchID":1`);
  return text;
}

describe("the dynamic insert on the real ClickHouse", () => {
  let db: LiveDatabase;
  const t = (name: string) => qualifiedTable(db.database, name);

  before(async () => {
    db = await createLiveDatabase();
  });
  after(async () => {
    await db.drop();
  });

  function core(options: LoaderConfigInput, route: ConstructorParameters<typeof LoaderCore>[0]["route"], letters: string, inserter: RowInserter = new ClickHouseRowInserter(db.client, SETTINGS), registry = new Registry()) {
    return new LoaderCore({
      config: compileLoaderConfig({ flush: { maxRows: 100_000 }, ...options }),
      inserter,
      deadLetters: new ClickHouseDeadLetterSink(db.client, letters),
      commit: () => Promise.resolve(),
      decodeMode: "json-object",
      route,
      metrics: new LoaderMetrics(registry),
    });
  }

  async function landAll(c: LoaderCore, messages: readonly LoaderMessage[]): Promise<void> {
    for (const m of messages) c.accept(m);
    for (let k = 0; k < 100 && c.status().unplaced > 0; k++) await c.runCycle({ all: true, ignoreBackoff: true });
    assert.equal(c.status().unplaced, 0, `every message placed: ${JSON.stringify(c.status().heldTables.map((h) => h.heldBy))}`);
  }

  test("property: RowBinary and JSONEachRow give identical rows and dead letters for the same 600 messages", async () => {
    const random = seededRandom(37);
    const messages: LoaderMessage[] = Array.from({ length: 600 }, (_, n) => ({ topic, partition: n % 2, offset: BigInt(n), key: null, value: Buffer.from(awkwardHit(random, n)) }));
    const results: { rows: unknown[]; letters: unknown[]; formats: string }[] = [];
    for (const format of ["row_binary", "json_each_row"] as const) {
      const table = t(`hits_${format}`);
      const letters = t(`letters_${format}`);
      await db.client.command({ query: worldLandingDdl(table, "kafka_offset") });
      await db.client.command({ query: deadLetterTableDdl(letters) });
      const registry = new Registry();
      await landAll(core({ insertFormat: format }, hitsRouter(["ch1"], table), letters, undefined, registry), messages);
      const rows = await db.query(`SELECT * FROM ${table} ORDER BY kafka_offset`);
      const dead = await db.query(`SELECT toString(offset) AS offset, reason, error_code, hex(raw) AS raw FROM ${letters} ORDER BY offset`);
      results.push({ rows, letters: dead, formats: await registry.getSingleMetricAsString("loader_rows_sent_total") });
    }
    const [binary, json] = results;
    assert.ok(binary !== undefined && json !== undefined);
    assert.ok(binary.rows.length > 500, `most messages are rows: ${binary.rows.length}`);
    assert.ok(binary.letters.length > 10, `the planted refusals are dead letters: ${binary.letters.length}`);
    assert.deepEqual(binary.letters, json.letters, "the same dead letters, reasons and codes");
    assert.equal(binary.rows.length, json.rows.length);
    binary.rows.forEach((row, i) => assert.deepEqual(row, json.rows[i], `row ${i}`));
    // most rows went RowBinary; the awkward ones JSONEachRow
    const sent = (format: string, text: string) => Number(new RegExp(`format="${format}"} (\\d+)`).exec(text)?.[1] ?? 0);
    assert.ok(sent("row_binary", binary.formats) > 350 && sent("json_each_row", binary.formats) > 50, binary.formats);
    assert.equal(sent("row_binary", json.formats), 0, json.formats);
  });

  test("a column added mid-stream is filled from the next batch on; one dropped under encoded rows makes them stale, re-encoded and landed", async () => {
    const table = t("grow");
    const letters = t("grow_letters");
    await db.client.command({ query: `CREATE TABLE ${table} (id UInt64, name String, gone String) ENGINE = MergeTree ORDER BY id` });
    await db.client.command({ query: deadLetterTableDdl(letters) });
    const route = () => ({ target: { node: "ch1", table }, fields: {} });
    const message = (n: number): LoaderMessage => ({ topic, partition: 0, offset: BigInt(n), key: null, value: Buffer.from(JSON.stringify({ id: n, name: `n${n}`, extra: `e${n}`, gone: `g${n}` })) });
    let dropBeforeInsert = false;
    const base = new ClickHouseRowInserter(db.client, SETTINGS);
    const inserter: RowInserter = {
      skipsUnknownFields: true,
      insertLines: (target, lines) => base.insertLines(target, lines),
      readColumns: (target: LoaderTarget) => base.readColumns(target),
      insertRowBinary: async (target, columns, rows) => {
        if (dropBeforeInsert) {
          dropBeforeInsert = false;
          await db.client.command({ query: `ALTER TABLE ${table} DROP COLUMN gone` });
        }
        await base.insertRowBinary(target, columns, rows);
      },
    };
    const c = core({}, route, letters, inserter);
    await landAll(c, Array.from({ length: 100 }, (_, n) => message(n)));
    await db.client.command({ query: `ALTER TABLE ${table} ADD COLUMN extra String` });
    await landAll(c, Array.from({ length: 100 }, (_, n) => message(100 + n)));
    dropBeforeInsert = true;
    await landAll(c, Array.from({ length: 100 }, (_, n) => message(200 + n)));
    assert.equal(dropBeforeInsert, false, "the drop happened between encoding and INSERT");
    const [counts] = await db.query<{ rows: string; ids: string; extra: string; letters: string }>(
      `SELECT count() AS rows, uniqExact(id) AS ids, countIf(extra = concat('e', toString(id))) AS extra, (SELECT count() FROM ${letters}) AS letters FROM ${table}`,
    );
    assert.deepEqual(counts, { rows: "300", ids: "300", extra: "200", letters: "0" });
  });

  test("capture modes: raw_only keeps the message byte for byte, extracted_only none, a DDL declaration beats config, full is refused at start", async () => {
    const letters = t("mode_letters");
    await db.client.command({ query: deadLetterTableDdl(letters) });
    const message = (n: number): LoaderMessage => ({ topic, partition: 0, offset: BigInt(n), key: null, value: Buffer.from(`{ "WatchID" : ${n},"Title":"t\\u00e9 ${n}"  }`) });
    for (const [name, comment, options, expectRaw] of [
      ["raw", "", { captureMode: "raw_only" }, true],
      ["extracted", "", { captureMode: "extracted_only" }, false],
      ["declared", " COMMENT '@capture_mode extracted_only: the baseline stores no payload'", { captureMode: "raw_only" }, false],
    ] as const) {
      const table = t(`mode_${name}`);
      await db.client.command({ query: `CREATE TABLE ${table} (WatchID Float64, Title String, _raw String${comment}, kafka_offset UInt64) ENGINE = MergeTree ORDER BY kafka_offset` });
      await landAll(core(options, hitsRouter(["ch1"], table), letters), Array.from({ length: 50 }, (_, n) => message(n)));
      const rows = await db.query<{ raw: string; title: string }>(`SELECT hex(_raw) AS raw, Title AS title FROM ${table} ORDER BY kafka_offset`);
      assert.equal(rows.length, 50, name);
      rows.forEach((row, n) => {
        assert.equal(row.title, `té ${n}`, `${name}: the promoted column`);
        assert.equal(row.raw, expectRaw ? message(n).value?.toString("hex").toUpperCase() : "", `${name}: _raw`);
      });
    }
    const inserter = new ClickHouseRowInserter(db.client, SETTINGS);
    const full = compileLoaderConfig({ tables: { [`${db.database}.mode_raw`]: { captureMode: "full" } } });
    await assert.rejects(
      checkTargets((target) => inserter.readColumns(target), [{ target: { node: "ch1", table: t("mode_raw") }, decodeMode: "json-object" }], full, true),
      (err: Error) => err.message.includes(`${db.database}.mode_raw: capture mode full (from the table config)`) && /no JSON type/.test(err.message),
    );
    const plans = await checkTargets((target) => inserter.readColumns(target), [{ target: { node: "ch1", table: t("mode_declared") }, decodeMode: "json-object" }], full, true);
    assert.deepEqual(plans.map((p) => [p.capture?.mode, p.capture?.from, p.format]), [["extracted_only", "ddl", "row_binary"]]);
  });

  test("a batch held because its table was dropped lands in the default table, its target kept", async () => {
    const table = t("doomed");
    const fallback = `${db.database}.loader_default`;
    const letters = t("doomed_letters");
    await db.client.command({ query: `CREATE TABLE ${table} (WatchID Float64, _raw String) ENGINE = MergeTree ORDER BY WatchID` });
    await db.client.command({ query: `CREATE TABLE ${t("loader_default")} (_target_table String, _raw String, kafka_topic String, kafka_partition UInt32, kafka_offset UInt64, _load_ts DateTime DEFAULT now()) ENGINE = MergeTree ORDER BY kafka_offset` });
    await db.client.command({ query: deadLetterTableDdl(letters) });
    const registry = new Registry();
    const c = core({ defaultTable: fallback }, hitsRouter(["ch1"], table), letters, undefined, registry);
    const message = (n: number): LoaderMessage => ({ topic, partition: 1, offset: BigInt(n), key: null, value: Buffer.from(`{"WatchID":${n}}`) });
    await landAll(c, [message(0), message(1)]);
    await db.client.command({ query: `DROP TABLE ${table}` });
    const report = await (async () => {
      for (let n = 2; n < 12; n++) c.accept(message(n));
      return c.runCycle({ all: true });
    })();
    assert.equal(report.rowsHeld, 0, JSON.stringify(report.heldBy));
    assert.equal(report.rowsLanded, 10);
    assert.deepEqual(report.committed, [{ topic, partition: 1, offset: 12n }]);
    const rows = await db.query<{ target: string; raw: string; offset: string }>(`SELECT _target_table AS target, _raw AS raw, toString(kafka_offset) AS offset FROM ${t("loader_default")} ORDER BY kafka_offset`);
    assert.deepEqual(rows, Array.from({ length: 10 }, (_, k) => ({ target: `${db.database}.doomed`, raw: `{"WatchID":${k + 2}}`, offset: String(k + 2) })));
    assert.match(await registry.getSingleMetricAsString("loader_rows_defaulted_total"), / 10$/m);
  });
});
