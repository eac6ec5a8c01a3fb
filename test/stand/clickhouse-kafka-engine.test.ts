// The ClickHouse 18.16 Kafka engine against our Kafka 4.x broker: one consumer group, a reader on
// BOTH nodes, a 2-partition JSONEachRow topic, a materialised view into ReplicatedMergeTree.
// Every produced row must arrive exactly once. (18.16 here links Debian's librdkafka 2.0.2, which
// speaks the protocol versions Kafka 4 kept; see docs/stand.md.)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Admin } from "kafkajs";
import { loadStandConfig } from "../../src/config/stand.ts";
import { connectClickHouse, type StandClickHouse } from "../../src/clickhouse/client.ts";
import { detectPlatform } from "../../src/clickhouse/platform.ts";
import { quoteIdentifier as id } from "../../src/clickhouse/sql.ts";
import { kafkaEngineClause } from "../../bench/kafka-engine.ts";
import { kafkaClient, randomName, retry, waitUntil } from "../../testkit/stand/live-stand.ts";

const config = loadStandConfig();
const cluster = id(config.clickhouse.cluster);
const [node1, node2] = config.clickhouse.nodes;
const db = randomName("stand_test_kafka_engine");
const topic = randomName("stand_test_engine_topic");
const group = randomName("stand_test_engine_group");
const ROWS = 2000;
const kafka = kafkaClient("stand-test-kafka-engine");
let admin: Admin;
let ch1: StandClickHouse;
let ch2: StandClickHouse;

before(async () => {
  assert.ok(node1 && node2);
  ch1 = connectClickHouse({ node: node1.name });
  ch2 = connectClickHouse({ node: node2.name });
  admin = kafka.admin();
  await admin.connect();
});

after(async () => {
  // the readers go first: a live reader holds its group, which cannot be deleted while it is there
  await ch1.command(`DROP DATABASE IF EXISTS ${id(db)} ON CLUSTER ${cluster}`);
  await retry("delete consumer group", async () => {
    if ((await admin.listGroups()).groups.some((g) => g.groupId === group)) await admin.deleteGroups([group]);
  });
  if ((await admin.listTopics()).includes(topic)) await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  await ch1.close();
  await ch2.close();
});

async function createReaders(): Promise<void> {
  const platform = await detectPlatform(ch1);
  const brokers = `${config.bind_host}:${config.kafka.port}`;
  await ch1.command(`CREATE DATABASE ${id(db)} ON CLUSTER ${cluster}`);
  await ch1.command(
    `CREATE TABLE ${id(db)}.hits ON CLUSTER ${cluster} (id UInt64, page String)
     ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/hits', '{replica}') ORDER BY id`,
  );
  await ch1.command(`CREATE TABLE ${id(db)}.hits_dist ON CLUSTER ${cluster} AS ${id(db)}.hits ENGINE = Distributed(${cluster}, ${id(db)}, hits, id)`);
  await ch1.command(
    `CREATE TABLE ${id(db)}.hits_queue ON CLUSTER ${cluster} (id UInt64, page String)
     ${kafkaEngineClause(platform, { brokers, topic, group, format: "JSONEachRow" })}`,
  );
  await ch1.command(`CREATE MATERIALIZED VIEW ${id(db)}.hits_mv ON CLUSTER ${cluster} TO ${id(db)}.hits AS SELECT id, page FROM ${id(db)}.hits_queue`);
}

async function groupMembers(): Promise<number> {
  const { groups } = await admin.describeGroups([group]);
  return groups[0]?.state === "Stable" ? groups[0].members.length : 0;
}

test("Kafka engine readers on both nodes in one group take every row of a 2-partition topic exactly once", async () => {
  await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
  await createReaders();
  let members = 0;
  await waitUntil("both ClickHouse readers in the consumer group", async () => (members = await groupMembers()) === 2, () => `${members} stable members`, 60_000);

  const producer = kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: ROWS }, (_, i) => ({ partition: i % 2, value: JSON.stringify({ id: i + 1, page: `/p/${i % 7}` }) }));
  await producer.send({ topic, messages });
  await producer.disconnect();

  let state = { n: "0", ids: "0" };
  const readTotals = async (): Promise<boolean> => {
    state = (await ch2.query<{ n: string; ids: string }>(`SELECT count() AS n, uniqExact(id) AS ids FROM ${id(db)}.hits_dist`))[0] ?? state;
    return Number(state.n) >= ROWS;
  };
  await waitUntil(`${ROWS} rows in ${db}.hits_dist`, readTotals, () => `count ${state.n}, unique ids ${state.ids}`, 120_000);
  // a late duplicate (re-delivery after a rebalance) would land after the count is reached: look again
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await readTotals();
  assert.deepEqual(state, { n: String(ROWS), ids: String(ROWS) }, "every produced row exactly once");

  const perNode = await Promise.all([ch1, ch2].map(async (ch) => (await ch.query<{ n: string }>(`SELECT count() AS n FROM ${id(db)}.hits`))[0]?.n));
  console.log(`  rows per shard: ${node1?.name}=${perNode[0]}, ${node2?.name}=${perNode[1]}`);
  // each reader wrote what it consumed into its own node's shard: both nodes took part
  assert.ok(perNode.every((n) => Number(n) > 0), `both nodes consumed (${perNode.join(", ")})`);
  const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  const committed = offsets[0]?.partitions.map((p) => Number(p.offset)).reduce((a, b) => a + b, 0);
  assert.equal(committed, ROWS, "the group committed the end offset of both partitions");
});
