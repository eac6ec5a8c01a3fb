// The kafkajs loop on the test stand's real Kafka and ClickHouse, with a topic, group and database
// of its own: poison messages in the middle are dead-lettered with their offsets and reasons while
// every good row lands; a restart resumes from the committed offset with nothing lost or doubled.
import { setTimeout as sleep } from "node:timers/promises";
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Admin, Producer } from "kafkajs";
import { Registry } from "prom-client";
import { ClickHouseRowInserter, qualifiedTable, type RowInserter } from "../../src/loader/clickhouse-sink.ts";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import type { TopicLoader } from "../../src/loader/consumer.ts";
import { ClickHouseDeadLetterSink, deadLetterTableDdl } from "../../src/loader/dead-letters.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import { createTopicLoader } from "../../src/loader/world-loader.ts";
import { kafkaClient, randomName, waitUntil } from "../../testkit/stand/live-stand.ts";
import type { LiveDatabase } from "../../testkit/stand/live-clickhouse.ts";
import { openTestTopic, type TestTopic } from "../../testkit/stand/test-topic.ts";

describe("TopicLoader on the real Kafka and ClickHouse", () => {
  const topic = randomName("loader_test");
  const groupId = randomName("loader_test");
  const hangingGroupId = randomName("loader_test");
  const kafka = kafkaClient(randomName("loader_test"));
  let admin: Admin;
  let producer: Producer;
  let db: LiveDatabase;
  let testTopic: TestTopic | undefined;
  let events: string;
  let deadLetters: string;
  const loaders: TopicLoader[] = [];

  before(async () => {
    testTopic = await openTestTopic(kafka, topic, 2);
    ({ admin, producer, db } = testTopic);
    events = qualifiedTable(db.database, "events");
    deadLetters = qualifiedTable(db.database, "dead_letters");
    await db.client.command({ query: `CREATE TABLE ${events} (id UInt64, part UInt8, big UInt64) ENGINE = MergeTree ORDER BY id` });
    await db.client.command({ query: deadLetterTableDdl(deadLetters) });
  });

  after(async () => {
    for (const started of loaders) await started.stop(); // a failed test must not leave a member in the group
    await testTopic?.close([groupId, hangingGroupId]);
  });

  function loader(registry: Registry, maxAgeMs = 100, options: { group?: string; inserter?: RowInserter; drainTimeoutMs?: number } = {}): TopicLoader {
    // the service's own factory and consumer settings; a database, topic and group of the test's own
    const created = createTopicLoader({
      kafka,
      topic,
      groupId: options.group ?? groupId,
      tickMs: 20,
      drainTimeoutMs: options.drainTimeoutMs,
      config: compileLoaderConfig({ maxMessageBytes: 64 * 1024, flush: { maxRows: 50, maxAgeMs } }),
      inserter: options.inserter ?? new ClickHouseRowInserter(db.client),
      deadLetters: new ClickHouseDeadLetterSink(db.client, deadLetters),
      decodeMode: "json-object",
      route: (message) => ({ target: { node: "ch1", table: events }, fields: { part: message.partition } }),
      metrics: new LoaderMetrics(registry),
    });
    loaders.push(created);
    return created;
  }

  async function produce(from: number, to: number, poison: ReadonlyMap<number, Buffer>): Promise<void> {
    const messages = [];
    for (let id = from; id < to; id++) {
      messages.push({ key: `k${id}`, value: poison.get(id) ?? Buffer.from(`{"id":${id},"big":${9007199254740993n + BigInt(id)}}`), partition: id % 2 });
    }
    await producer.send({ topic, messages });
  }

  async function committedTotal(): Promise<number> {
    const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  }

  async function waitCommitted(total: number): Promise<void> {
    let last = -1;
    await waitUntil(`group committed ${total} messages`, async () => (last = await committedTotal()) >= total, () => `committed ${last}`, 60_000);
  }

  test("poison in the middle, then a restart: every good row once, every poison dead-lettered", async () => {
    const poison = new Map<number, Buffer>([
      [40, Buffer.from("definitely not json")],
      [41, Buffer.from([0xff, 0xfe, 0x7b, 0x7d])],
      [57, Buffer.from("[1,2,3]")],
      [60, Buffer.from('{"id":"not a number"}')],
      [161, Buffer.from("x".repeat(70 * 1024))],
      [170, Buffer.from('{"id":-170}')],
    ]);
    const reasons = new Map([[40, "not_json"], [41, "invalid_utf8"], [57, "not_object"], [60, "cannot_parse_input_assertion_failed"], [161, "too_large"], [170, "cannot_parse_number"]]);
    await produce(0, 120, poison);

    // The first loader flushes by age only after a minute: the last messages it reads are still
    // buffered when it stops, and stopping must flush and commit them.
    const first = loader(new Registry(), 60_000);
    await first.start();
    await first.joined();
    assert.deepEqual(first.assignedPartitions(), [{ topic, partition: 0 }, { topic, partition: 1 }]);
    await waitCommitted(120);
    // idle now: kafkajs's fetch loop still begins a fetch every maxWaitTimeInMs, and the loader sees
    // it (the loader's watchdog restarts consumers whose loop fell silent for a minute: src/loader/main.ts)
    await sleep(1_500);
    await waitUntil("a fetch to begin while idle", () => Promise.resolve(first.fetchSilenceMs(Date.now()) < 1_000), () => `silent ${first.fetchSilenceMs(Date.now())} ms`, 30_000);
    await produce(120, 130, poison);
    await waitUntil("the first loader to buffer the last 10 rows", () => Promise.resolve(first.core.status().bufferedRows === 10), () => JSON.stringify(first.core.status()), 30_000);
    await first.stop();
    assert.equal(first.core.status().unplaced, 0, "stop flushed everything read");
    assert.equal(await committedTotal(), 130, "and committed it");
    assert.deepEqual(first.committedOffsets(), [{ topic, partition: 0, offset: 65n }, { topic, partition: 1, offset: 65n }], "what this loader committed");
    assert.equal(first.status().state, "stopped");
    assert.equal(first.fetchSilenceMs(Date.now()), 0, "a stopped loader is not silent, it is stopped");

    await produce(130, 240, poison); // produced while no loader runs
    const registry = new Registry();
    const second = loader(registry);
    await second.start();
    await waitCommitted(240);
    await second.stop();

    const rows = await db.query<{ id: string; n: string; big: string }>(`SELECT id, count() AS n, any(big) AS big FROM ${events} GROUP BY id ORDER BY id`);
    const expected = Array.from({ length: 240 }, (_, id) => id).filter((id) => !poison.has(id));
    assert.deepEqual(rows.map((r) => Number(r.id)), expected, "nothing lost");
    assert.deepEqual(rows.filter((r) => r.n !== "1").map((r) => r.id), [], "nothing doubled");
    assert.deepEqual(rows.map((r) => r.big), expected.map((id) => String(9007199254740993n + BigInt(id))), "exact 64-bit integers");

    const letters = await db.query<{ partition: number; offset: string; key: string; reason: string }>(`SELECT partition, toString(offset) AS offset, key, reason FROM ${deadLetters} ORDER BY key`);
    const expectedLetters = [...poison.keys()].map((id) => ({ partition: id % 2, offset: String(Math.floor(id / 2)), key: `k${id}`, reason: reasons.get(id) }));
    assert.deepEqual(letters.sort((a, b) => a.key.localeCompare(b.key)), expectedLetters.sort((a, b) => a.key.localeCompare(b.key)));
    assert.match(await registry.getSingleMetricAsString("loader_committed_offset"), /partition="1"} 120/);
  });

  test("stop() while every insert hangs returns within the drain timeout and still leaves the group", async () => {
    let entered: () => void = () => undefined;
    const insertEntered = new Promise<void>((resolve) => (entered = resolve));
    const hanging: RowInserter = {
      insertLines: () => {
        entered();
        return new Promise<void>(() => undefined);
      },
    };
    const stuck = loader(new Registry(), 50, { group: hangingGroupId, inserter: hanging, drainTimeoutMs: 1500 });
    await stuck.start();
    await stuck.joined();
    await waitUntil("the stuck loader to read the topic", () => Promise.resolve(stuck.core.status().unplaced >= 240), () => stuck.describe(), 30_000);
    await insertEntered; // a flush cycle is now waiting on the hanging insert
    const started = Date.now();
    await stuck.stop();
    const took = Date.now() - started;
    assert.ok(took < 1500 + 2500, `stop took ${took} ms`);
    assert.equal(stuck.status().state, "stopped");
    assert.deepEqual(stuck.committedOffsets(), [], "nothing was placed, so nothing committed");
    const [group] = (await admin.describeGroups([hangingGroupId])).groups;
    assert.deepEqual([group?.state, group?.members.length], ["Empty", 0], "the member left the group");
  });
});
