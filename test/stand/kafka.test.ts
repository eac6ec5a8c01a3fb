// Kafka 4.x (KRaft) through kafkajs: the operations the DAG runner performs on topics and groups.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Admin } from "kafkajs";
import { kafkaClient, randomName, retry, waitUntil } from "../../testkit/stand/live-stand.ts";

const kafka = kafkaClient("stand-test-kafka");
const topic = randomName("stand_test_topic");
const group = randomName("stand_test_group");
let admin: Admin;

before(async () => {
  admin = kafka.admin();
  await admin.connect();
});

after(async () => {
  const topics = await admin.listTopics();
  if (topics.includes(topic)) await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
});

test("create a 2-partition topic, produce, consume with a group, delete the group, delete the topic", async () => {
  await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
  const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
  assert.equal(meta?.partitions.length, 2);

  const producer = kafka.producer();
  await producer.connect();
  const sent = Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, value: JSON.stringify({ id: i }) }));
  await producer.send({ topic, messages: sent });
  await producer.disconnect();

  const received = new Set<number>();
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: ({ message }) => {
      received.add((JSON.parse(message.value?.toString() ?? "{}") as { id: number }).id);
      return Promise.resolve();
    },
  });
  try {
    await waitUntil("10 messages consumed", () => Promise.resolve(received.size === 10), () => `${received.size} of 10`, 30_000);
  } finally {
    await consumer.disconnect();
  }

  const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
  assert.ok(groups.includes(group), `group ${group} is listed`);
  await retry("delete consumer group", () => admin.deleteGroups([group]));
  assert.ok(!(await admin.listGroups()).groups.some((g) => g.groupId === group), "group is gone");

  await admin.deleteTopics({ topics: [topic] });
  await waitUntil("topic deleted", async () => !(await admin.listTopics()).includes(topic), () => "still listed", 30_000);
});
