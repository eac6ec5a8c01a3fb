// Kafka headers on the test stand's real Kafka and ClickHouse, with a topic, group and database of
// the test's own: messages produced with headers (a string, a Buffer, a repeated name, a value that
// is not UTF-8, none) reach the loader as one Buffer per name, and the landing that declares two of
// them gets each as its column, a missing or non-UTF-8 one as the column's default (counted).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Producer } from "kafkajs";
import { Registry } from "prom-client";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { ClickHouseRowInserter, qualifiedTable } from "../../src/loader/clickhouse-sink.ts";
import type { TopicLoader } from "../../src/loader/consumer.ts";
import { ClickHouseDeadLetterSink, deadLetterTableDdl } from "../../src/loader/dead-letters.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import { countSkippedHeaders, hitsRouter, OptionsInForce } from "../../src/loader/routes.ts";
import type { LoaderMessage } from "../../src/loader/types.ts";
import { createTopicLoader } from "../../src/loader/world-loader.ts";
import type { LiveDatabase } from "../../testkit/stand/live-clickhouse.ts";
import { openTestTopic, type TestTopic } from "../../testkit/stand/test-topic.ts";
import { kafkaClient, randomName, waitUntil } from "../../testkit/stand/live-stand.ts";

const NOT_UTF8 = Buffer.from([0x77, 0xff, 0x65]);

describe("Kafka headers through the real Kafka into a landing that declares them", () => {
  const topic = randomName("loader_test");
  const groupId = randomName("loader_test");
  const kafka = kafkaClient(randomName("loader_test"));
  let producer: Producer;
  let db: LiveDatabase;
  let testTopic: TestTopic | undefined;
  let loader: TopicLoader | undefined;

  before(async () => {
    testTopic = await openTestTopic(kafka, topic, 1);
    ({ producer, db } = testTopic);
    await db.client.command({
      query: `CREATE TABLE ${qualifiedTable(db.database, "events")} (id UInt64, _raw String, kafka_topic String, kafka_partition UInt32, kafka_offset UInt64,
        trace_id String DEFAULT 'no trace', source String DEFAULT 'unknown') ENGINE = MergeTree ORDER BY id`,
    });
    await db.client.command({ query: deadLetterTableDdl(qualifiedTable(db.database, "dead_letters")) });
  });

  after(async () => {
    await loader?.stop(); // a failed test must not leave a member in the group
    await testTopic?.close([groupId]);
  });

  test("each message carries its headers; declared ones land in their columns, the rest take defaults", async () => {
    const table = `${db.database}.events`;
    const options = new OptionsInForce(compileLoaderConfig({ flush: { maxRows: 100, maxAgeMs: 100 }, captureMode: "raw_only", routes: { hits: table }, tables: { [table]: { headers: { "x-trace-id": "trace_id", "x-source": "source" } } } }));
    const registry = new Registry();
    const metrics = new LoaderMetrics(registry);
    const seen: LoaderMessage[] = [];
    const route = hitsRouter(["ch1"], options.landing("hits"), countSkippedHeaders(metrics));
    loader = createTopicLoader({
      kafka,
      topic,
      groupId,
      tickMs: 20,
      decodeMode: "json-object",
      config: options.current,
      inserter: new ClickHouseRowInserter(db.client),
      deadLetters: new ClickHouseDeadLetterSink(db.client, qualifiedTable(db.database, "dead_letters")),
      route: (message, text) => {
        seen.push(message);
        return route(message, text);
      },
      metrics,
    });
    await producer.send({
      topic,
      messages: [
        { value: '{"id":0}', headers: { "x-trace-id": "t-0", "x-source": "web" } },
        { value: '{"id":1}', headers: { "x-trace-id": Buffer.from("t-1") } },
        { value: '{"id":2}', headers: { "x-trace-id": ["first", "second"] } },
        { value: '{"id":3}' },
        { value: '{"id":4}', headers: { "x-trace-id": "t-4", "x-source": NOT_UTF8 } },
        { value: '{"id":5}', headers: { "x-other": "o-5" } },
      ],
    });
    await loader.start();
    await loader.joined();
    let landed = 0;
    await waitUntil("6 rows landed", async () => (landed = Number((await db.query<{ n: string }>(`SELECT count() AS n FROM ${table}`))[0]?.n ?? 0)) >= 6, () => `${landed} rows`, 60_000);
    await loader.stop();

    const headers = seen.map((m) => Object.fromEntries([...(m.headers ?? new Map<string, Buffer>())].map(([name, value]) => [name, value.toString("hex")])));
    const hex = (text: string) => Buffer.from(text).toString("hex");
    assert.deepEqual(headers, [
      { "x-trace-id": hex("t-0"), "x-source": hex("web") },
      { "x-trace-id": hex("t-1") },
      { "x-trace-id": hex("second") },
      {},
      { "x-trace-id": hex("t-4"), "x-source": NOT_UTF8.toString("hex") },
      { "x-other": hex("o-5") },
    ]);
    assert.equal(seen[3]?.headers, undefined, "a record without headers has none");

    const rows = await db.query<{ id: string; trace_id: string; source: string }>(`SELECT id, trace_id, source FROM ${table} ORDER BY id`);
    assert.deepEqual(rows, [
      { id: "0", trace_id: "t-0", source: "web" },
      { id: "1", trace_id: "t-1", source: "unknown" },
      { id: "2", trace_id: "second", source: "unknown" },
      { id: "3", trace_id: "no trace", source: "unknown" },
      { id: "4", trace_id: "t-4", source: "unknown" },
      { id: "5", trace_id: "no trace", source: "unknown" },
    ]);
    assert.match(await registry.getSingleMetricAsString("loader_header_values_skipped_total"), new RegExp(`table="ch1:${table}",header="x-source"} 1`));
  });
});
