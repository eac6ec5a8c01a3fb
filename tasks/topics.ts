// The world's Kafka topics: created before the DDL (a ClickHouse reader never creates topics, and a
// broker-made topic would get one partition), deleted by world_recreate after the consumer groups.
import type { Admin, ITopicMetadata } from "kafkajs";
import { WORLD_TOPICS, type WorldTopic, sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { withKafkaAdmin, worldBrokers, type KafkaTarget } from "./kafka-admin.ts";
import { errorMessage } from "../src/errors.ts";

const SETTLE_TIMEOUT_MS = 30_000;

export interface CreateTopicsInput extends TaskIo, KafkaTarget {
  /** hits (2 partitions) and orders (1) when omitted. */
  topics?: readonly WorldTopic[];
}

async function describeTopics(admin: Admin, names: readonly string[]): Promise<Map<string, ITopicMetadata>> {
  const existing = new Set(await admin.listTopics());
  const present = names.filter((n) => existing.has(n));
  if (present.length === 0) return new Map();
  const { topics } = await admin.fetchTopicMetadata({ topics: present });
  return new Map(topics.map((t) => [t.name, t]));
}

function wrongPartitions(topic: WorldTopic, found: number): WorldTaskError {
  return new WorldTaskError(
    "createTopics",
    `topic '${topic.name}' exists with ${found} partition(s), but the world needs exactly ${topic.partitions}. ` +
      "Its readers and keys depend on that count; delete the topic (world_recreate does) and create it again.",
  );
}

/** The world topics' max.message.bytes. */
export const TOPIC_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Creates the missing topics with their exact partition counts; refuses an existing topic with another count. */
export async function createTopics(input: CreateTopicsInput): Promise<void> {
  const wanted = input.topics ?? WORLD_TOPICS;
  throwIfAborted(input.signal, "createTopics");
  await withKafkaAdmin(input, "world-create-topics", async (admin) => {
    const existing = await describeTopics(admin, wanted.map((t) => t.name));
    for (const topic of wanted) {
      const found = existing.get(topic.name);
      if (found && found.partitions.length !== topic.partitions) throw wrongPartitions(topic, found.partitions.length);
      if (found) input.log(`topic ${topic.name}: exists with ${topic.partitions} partition(s)`);
    }
    const missing = wanted.filter((t) => !existing.has(t.name));
    if (missing.length === 0) return;
    await createWhenDeletionSettled(admin, missing, input);
    const created = await describeTopics(admin, missing.map((t) => t.name));
    for (const topic of missing) {
      const found = created.get(topic.name);
      if (!found) throw new WorldTaskError("createTopics", `topic '${topic.name}' was created but the broker does not list it`);
      if (found.partitions.length !== topic.partitions) throw wrongPartitions(topic, found.partitions.length);
      input.log(`topic ${topic.name}: created with ${topic.partitions} partition(s) on ${worldBrokers(input).join(",")}`);
    }
  });
}

/**
 * Whether the broker refused a creation only because topics of those names are still there: Kafka
 * answers TOPIC_ALREADY_EXISTS (code 36) for a topic marked for deletion too. kafkajs gathers the
 * per-topic answers in a KafkaJSAggregateError of KafkaJSProtocolErrors, each with its `type`.
 * Decided by that type, never by the message text.
 */
export function topicStillThere(err: unknown): boolean {
  // by name and field, not instanceof: kafkajs is CommonJS and Node's ESM import does not see its
  // error classes as named exports
  const inner: unknown = err instanceof Error && err.name === "KafkaJSAggregateError" ? (err as { errors?: unknown }).errors : [err];
  return Array.isArray(inner) && inner.length > 0 && inner.every((e: unknown) => kafkaErrorType(e) === "TOPIC_ALREADY_EXISTS");
}

/** A kafkajs protocol error's `type` (the broker's error name), or undefined. */
function kafkaErrorType(e: unknown): string | undefined {
  if (!(e instanceof Error) || !("type" in e)) return undefined;
  return typeof e.type === "string" ? e.type : undefined;
}

/**
 * A topic deleted a moment ago can still be "marked for deletion", and the broker refuses to create
 * it again until that finishes: retry for a while instead of failing the first time.
 */
async function createWhenDeletionSettled(admin: Admin, topics: readonly WorldTopic[], io: TaskIo): Promise<void> {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    try {
      await admin.createTopics({
        topics: topics.map((t) => ({
          topic: t.name,
          numPartitions: t.partitions,
          replicationFactor: 1,
          // the broker keeps a message up to this size (its default is 1 MB): an oversized message must reach the
          // loader, which dead-letters it as too_large with its offset, instead of being refused to its producer
          configEntries: [{ name: "max.message.bytes", value: String(TOPIC_MAX_MESSAGE_BYTES) }],
        })),
        waitForLeaders: true,
      });
      return;
    } catch (err) {
      const stillThere = topicStillThere(err);
      if (!stillThere || Date.now() > deadline) {
        throw new WorldTaskError("createTopics", `creating ${topics.map((t) => t.name).join(", ")} failed: ${errorMessage(err)}`, { cause: err });
      }
      io.log(`topics ${topics.map((t) => t.name).join(", ")} are still being deleted; retrying`);
      await sleepUnlessAborted(1000, io.signal, "createTopics");
    }
  }
}

export interface DeleteTopicsInput extends TaskIo, KafkaTarget {
  /** hits and orders when omitted. */
  topics?: readonly string[];
}

/** Deletes the topics that exist and waits until the broker no longer lists them. */
export async function deleteTopics(input: DeleteTopicsInput): Promise<void> {
  const names = input.topics ?? WORLD_TOPICS.map((t) => t.name);
  throwIfAborted(input.signal, "deleteTopics");
  await withKafkaAdmin(input, "world-delete-topics", async (admin) => {
    const present = (await admin.listTopics()).filter((t) => names.includes(t));
    if (present.length === 0) {
      input.log(`topics ${names.join(", ")}: none exist`);
      return;
    }
    await admin.deleteTopics({ topics: present, timeout: SETTLE_TIMEOUT_MS });
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    let left = present;
    while (left.length > 0) {
      if (Date.now() > deadline) throw new WorldTaskError("deleteTopics", `topics ${left.join(", ")} are still listed ${SETTLE_TIMEOUT_MS / 1000} s after deletion`);
      await sleepUnlessAborted(200, input.signal, "deleteTopics");
      const listed = new Set(await admin.listTopics());
      left = left.filter((t) => listed.has(t));
    }
    input.log(`topics deleted: ${present.join(", ")}`);
  });
}
