// A Kafka topic of a test's own on the test stand (the loader's Kafka tests share this frame): the
// topic, a connected admin and producer, and a ClickHouse database of its own; close() removes them.
import type { Admin, Kafka, Producer } from "kafkajs";
import { createLiveDatabase, type LiveDatabase } from "./live-clickhouse.ts";
import { retry } from "./live-stand.ts";

/** A Kafka topic of a test's own on the test stand, with a connected admin and producer and a ClickHouse database of its own. */
export interface TestTopic {
  admin: Admin;
  producer: Producer;
  db: LiveDatabase;
  /** Deletes the groups named, the topic and the database; disconnects. */
  close(groups: readonly string[]): Promise<void>;
}

export async function openTestTopic(kafka: Kafka, topic: string, partitions: number): Promise<TestTopic> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  const db = await createLiveDatabase();
  return {
    admin,
    producer,
    db,
    close: async (groups) => {
      await producer.disconnect();
      if (groups.length > 0) await retry("delete the test groups", () => admin.deleteGroups([...groups]));
      await admin.deleteTopics({ topics: [topic] });
      await admin.disconnect();
      await db.drop();
    },
  };
}
