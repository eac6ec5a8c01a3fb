// Producing into the stand's Kafka (make stand-up) with kafkajs: every hit arrives byte-identical
// to the file output, keys keep a client in one partition (kafkajs's DefaultPartitioner), batches
// larger than one partition's limit are split, and order snapshots are keyed by order_id. Topics
// are random and deleted afterwards. Without a broker the file fails: it is a stand file, never service-free.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Kafka, logLevel, Partitioners, type Admin } from "kafkajs";
import { loadStandConfig } from "../../src/config/stand.ts";
import { World, generateDay } from "../../generator/src/day.ts";
import { silentLogger } from "../../generator/src/log.ts";
import { runBatch, runSnapshots } from "../../generator/src/play.ts";
import type { Output } from "../../generator/src/config.ts";
import { DEFAULT_SEED } from "../../generator/src/world.ts";
import { errorMessage } from "../../src/errors.ts";

const config = loadStandConfig();
const brokers = [`${config.bind_host}:${config.kafka.port}`];
const kafka = new Kafka({ clientId: "generator-test", brokers, logLevel: logLevel.NOTHING, retry: { retries: 2 } });
const admin: Admin = kafka.admin();
const topics: string[] = [];

interface Received {
  readonly partition: number;
  readonly key: string;
  readonly value: string;
}

async function createTopic(partitions: number): Promise<string> {
  const topic = `test-generator-${randomBytes(4).toString("hex")}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  topics.push(topic);
  return topic;
}

/** Reads the topic from the beginning until `expected` messages arrived (or the deadline passes). */
async function consumeAll(topic: string, expected: number, timeoutMs = 60_000): Promise<Received[]> {
  const consumer = kafka.consumer({ groupId: `${topic}-reader`, maxBytesPerPartition: 8 * 1024 * 1024 });
  const received: Received[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (done = resolve));
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) received.push({ partition: batch.partition, key: m.key?.toString() ?? "", value: m.value?.toString() ?? "" });
        if (received.length >= expected) done();
        await Promise.resolve();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  } finally {
    await consumer.disconnect();
  }
  return received;
}

function kafkaOutput(topic: string, batchBytes = 900_000): Output {
  return { kind: "kafka", brokers, topic, batchSize: 5_000, batchBytes, inFlight: 4 };
}

/** The partition kafkajs's DefaultPartitioner gives a key on a topic of `partitions` partitions. */
function defaultPartition(key: string, partitions: number): number {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 1, replicas: [1], isr: [1] }));
  return Partitioners.DefaultPartitioner()({ topic: "t", partitionMetadata, message: { key, value: "" } });
}

before(async () => {
  try {
    await admin.connect();
    await admin.listTopics();
  } catch (err) {
    throw new Error(`Kafka at ${brokers[0]} is not reachable (make stand-up, or run it with make test): ${errorMessage(err)}`);
  }
});

after(async () => {
  if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
});

describe("generator into Kafka", () => {
  const expected = generateDay(new World(DEFAULT_SEED), 1);
  const expectedSorted = [...expected.lines].sort();

  // Default batches, and small ones: many sends per partition, the in-flight limit reached.
  for (const batchBytes of [900_000, 50_000]) {
    it(`every hit of day 1 arrives once, byte-identical, a client in one partition (batches of ${batchBytes} B)`, async () => {
      const topic = await createTopic(2);
      const report = await runBatch({ seed: DEFAULT_SEED, size: "canonical", day: 1, days: 1, limit: Number.POSITIVE_INFINITY, output: kafkaOutput(topic, batchBytes) }, silentLogger);
      assert.equal(report.sent, expected.lines.length);
      const received = await consumeAll(topic, expected.lines.length);
      assert.equal(received.length, expected.lines.length, "message count");
      assert.deepEqual(received.map((r) => r.value).sort(), expectedSorted, "the same bytes as the file output");
      const partitionOfKey = new Map<string, number>();
      for (const r of received) {
        const seen = partitionOfKey.get(r.key);
        assert.ok(seen === undefined || seen === r.partition, `client ${r.key} in partitions ${seen} and ${r.partition}`);
        partitionOfKey.set(r.key, r.partition);
        assert.equal(r.partition, defaultPartition(r.key, 2), "murmur2 partition, as Java and kafkajs pick it");
        const client = /"ClientID":(\d+)/.exec(r.value)?.[1];
        if (client !== "0") assert.equal(r.key, client);
      }
      assert.equal(new Set(received.map((r) => r.partition)).size, 2, "both partitions used");
    });
  }

  it("snapshot: order snapshots arrive keyed by order_id", async () => {
    const topic = await createTopic(1);
    const reports = await runSnapshots({ seed: DEFAULT_SEED, size: "canonical", day: 0, days: 2, limit: Number.POSITIVE_INFINITY, output: kafkaOutput(topic) }, silentLogger);
    const total = reports.reduce((sum, r) => sum + r.orders, 0);
    const received = await consumeAll(topic, total);
    assert.equal(received.length, total);
    for (const r of received) assert.equal(r.key, (JSON.parse(r.value) as { order_id: string }).order_id);
  });

  it("refuses a topic that does not exist instead of letting the broker create it", async () => {
    const missing = `test-generator-missing-${randomBytes(4).toString("hex")}`;
    await assert.rejects(
      runBatch({ seed: DEFAULT_SEED, size: "canonical", day: 0, days: 1, limit: 10, output: kafkaOutput(missing) }, silentLogger),
      /does not exist/,
    );
    assert.ok(!(await admin.listTopics()).includes(missing));
  });
});
