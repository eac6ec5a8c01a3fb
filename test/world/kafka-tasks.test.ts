// createTopics / deleteTopics / deleteConsumerGroups against the stand's broker, on topics and
// groups of random names (the world's own are fixed and belong to the end-to-end test).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { kafkaBroker } from "../../src/config/stand.ts";
import { WorldTaskError } from "../../src/world/io.ts";
import { deleteConsumerGroups } from "../../tasks/consumer-groups.ts";
import { createTopics, deleteTopics } from "../../tasks/topics.ts";
import { randomName } from "../../testkit/stand/live-stand.ts";
import { recordingIo } from "../../testkit/world/recording-io.ts";

const kafka = new Kafka({ clientId: "world-test-kafka-tasks", brokers: [kafkaBroker()], logLevel: logLevel.NOTHING });
const wide = { name: randomName("world_test_wide"), partitions: 2 };
const narrow = { name: randomName("world_test_narrow"), partitions: 1 };
const group = randomName("world_test_group");

after(async () => {
  await deleteConsumerGroups({ ...recordingIo(), groups: [group], leaveGraceMs: 10_000 }).catch(() => undefined);
  await deleteTopics({ ...recordingIo(), topics: [wide.name, narrow.name] });
});

async function partitionCounts(names: string[]): Promise<number[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    return names.map((n) => topics.find((t) => t.name === n)?.partitions.length ?? -1);
  } finally {
    await admin.disconnect();
  }
}

test("createTopics creates the exact partition counts and is idempotent", async () => {
  const io = recordingIo();
  await createTopics({ ...io, topics: [wide, narrow] });
  assert.deepEqual(await partitionCounts([wide.name, narrow.name]), [2, 1]);
  const again = recordingIo();
  await createTopics({ ...again, topics: [wide, narrow] });
  assert.ok(again.lines.some((l) => l.includes(`topic ${wide.name}: exists with 2`)), again.lines.join("\n"));
  assert.deepEqual(await partitionCounts([wide.name, narrow.name]), [2, 1]);
});

test("createTopics refuses a topic that exists with another partition count, naming both counts", async () => {
  await createTopics({ ...recordingIo(), topics: [narrow] });
  await assert.rejects(
    createTopics({ ...recordingIo(), topics: [{ name: narrow.name, partitions: 2 }] }),
    (err: unknown) => {
      assert.ok(err instanceof WorldTaskError);
      assert.match(err.message, new RegExp(`topic '${narrow.name}' exists with 1 partition\\(s\\), but the world needs exactly 2`));
      return true;
    },
  );
  assert.deepEqual(await partitionCounts([narrow.name]), [1], "the refused topic is left as it was");
});

test("deleteConsumerGroups refuses a group a live consumer holds, then deletes it once the consumer left", async () => {
  await createTopics({ ...recordingIo(), topics: [narrow] });
  const consumer = kafka.consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic: narrow.name, fromBeginning: true });
  await consumer.run({ eachMessage: () => Promise.resolve() });
  try {
    await assert.rejects(deleteConsumerGroups({ ...recordingIo(), groups: [group], leaveGraceMs: 2000 }), (err: unknown) => {
      assert.ok(err instanceof WorldTaskError);
      assert.match(err.message, new RegExp(`consumer group '${group}' is still held by 1 live consumer`));
      assert.match(err.message, /drop the stg database first/);
      return true;
    });
  } finally {
    await consumer.disconnect();
  }
  const io = recordingIo();
  await deleteConsumerGroups({ ...io, groups: [group], leaveGraceMs: 10_000 });
  assert.ok(io.lines.some((l) => l.includes(`consumer groups deleted: ${group}`)), io.lines.join("\n"));
  const admin = kafka.admin();
  await admin.connect();
  const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
  await admin.disconnect();
  assert.ok(!groups.includes(group), "the group is gone");
});

test("deleteTopics removes the topics and waits until the broker stops listing them", async () => {
  await createTopics({ ...recordingIo(), topics: [wide] });
  await deleteTopics({ ...recordingIo(), topics: [wide.name] });
  const admin = kafka.admin();
  await admin.connect();
  const topics = await admin.listTopics();
  await admin.disconnect();
  assert.ok(!topics.includes(wide.name));
});
