// A real fault for world_recreate's cleanup: a live kafkajs consumer that is a member of the world's
// consumer group clickstream_hits, so Kafka refuses to delete the group (as it would for a ClickHouse
// reader that outlived its database). It subscribes to a private topic of its own, so it never
// reads or commits anything on `hits`, and it joins while no ClickHouse reader is in the group
// (the assignors of kafkajs and librdkafka differ, so the two could not share a generation).
import { randomBytes } from "node:crypto";
import { Kafka, logLevel, type Consumer } from "kafkajs";
import { kafkaBroker } from "../../src/config/index.ts";
import { HITS_CONSUMER_GROUP } from "../../src/world/index.ts";

export interface GroupHolder {
  topic: string;
  release(): Promise<void>;
}

export async function holdHitsGroup(): Promise<GroupHolder> {
  const kafka = new Kafka({ clientId: "lifecycle-test-holder", brokers: [kafkaBroker()], logLevel: logLevel.NOTHING });
  const topic = `lifecycle_hold_${randomBytes(4).toString("hex")}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  const consumer: Consumer = kafka.consumer({ groupId: HITS_CONSUMER_GROUP, sessionTimeout: 30_000, heartbeatInterval: 3000 });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({ autoCommit: false, eachMessage: () => Promise.resolve() });
  await joined;
  return {
    topic,
    async release() {
      await consumer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}
