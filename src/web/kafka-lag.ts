// The world's topics as Kafka sees them, read-only: each partition's end offset and, per consumer
// group of the world (clickstream_*), its committed offset and lag. For the World page; a broker
// that does not answer within a few seconds is reported as an error by the caller.
import { Kafka, logLevel, type Admin } from "kafkajs";
import { kafkaBroker, loadStandConfig, type StandConfig } from "../config/index.ts";
import { WORLD_TOPICS } from "../world/index.ts";

export const WORLD_GROUP_PREFIX = "clickstream_";

export interface GroupOffset {
  group: string;
  /** null: the group has committed nothing on this partition. */
  committed: number | null;
  lag: number | null;
}

export interface PartitionOffsets {
  topic: string;
  partition: number;
  end_offset: number;
  groups: GroupOffset[];
}

/** Which of `groups` committed on `topic`: those are the partition's consumers shown. */
function groupOffsets(
  topic: string,
  partition: number,
  end: number,
  committed: ReadonlyMap<string, ReadonlyMap<string, number>>,
): GroupOffset[] {
  const shown: GroupOffset[] = [];
  for (const [group, byPartition] of committed) {
    const offsets = [...byPartition.entries()].filter(([key]) => key.startsWith(`${topic}/`));
    if (offsets.length === 0) continue;
    const offset = byPartition.get(`${topic}/${partition}`);
    shown.push({ group, committed: offset ?? null, lag: offset === undefined ? null : Math.max(0, end - offset) });
  }
  return shown;
}

async function readWithAdmin(admin: Admin): Promise<PartitionOffsets[]> {
  const { groups } = await admin.listGroups();
  const worldGroups = groups.map((g) => g.groupId).filter((id) => id.startsWith(WORLD_GROUP_PREFIX)).sort();
  const existing = new Set((await admin.listTopics()).filter((t) => WORLD_TOPICS.some((w) => w.name === t)));
  const topics = WORLD_TOPICS.map((t) => t.name).filter((t) => existing.has(t));
  const committed = new Map(
    await Promise.all(
      worldGroups.map(async (group) => {
        const answer = topics.length === 0 ? [] : await admin.fetchOffsets({ groupId: group, topics });
        const byPartition = new Map<string, number>();
        for (const t of answer) for (const p of t.partitions) if (Number(p.offset) >= 0) byPartition.set(`${t.topic}/${p.partition}`, Number(p.offset));
        return [group, byPartition] as const;
      }),
    ),
  );
  const ends = await Promise.all(topics.map(async (topic) => ({ topic, offsets: await admin.fetchTopicOffsets(topic) })));
  return ends.flatMap(({ topic, offsets }) =>
    offsets
      .map((o) => ({ topic, partition: o.partition, end_offset: Number(o.high), groups: groupOffsets(topic, o.partition, Number(o.high), committed) }))
      .sort((a, b) => a.partition - b.partition),
  );
}

export interface KafkaOffsetsOptions {
  config?: StandConfig;
  timeoutMs?: number;
}

function worldPageAdmin(options: KafkaOffsetsOptions): Admin {
  const config = options.config ?? loadStandConfig();
  const timeoutMs = options.timeoutMs ?? 3000;
  const kafka = new Kafka({
    clientId: "world-page",
    brokers: [kafkaBroker(config)],
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(1000, timeoutMs),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
  return kafka.admin();
}

/** One read over a connection of its own. */
export async function readKafkaOffsets(options: KafkaOffsetsOptions = {}): Promise<PartitionOffsets[]> {
  const admin = worldPageAdmin(options);
  await admin.connect();
  try {
    return await readWithAdmin(admin);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads over one admin connection kept between calls (connecting costs more than the reads); a read
 * that fails drops the connection, so the next one connects again.
 */
export function kafkaOffsetsReader(options: KafkaOffsetsOptions = {}): { read: () => Promise<PartitionOffsets[]>; close: () => Promise<void> } {
  let connected: Promise<Admin> | undefined;
  const drop = async (): Promise<void> => {
    const admin = connected;
    connected = undefined;
    await admin?.then((a) => a.disconnect()).catch(() => undefined);
  };
  return {
    async read() {
      connected ??= (async () => {
        const admin = worldPageAdmin(options);
        await admin.connect();
        return admin;
      })();
      try {
        return await readWithAdmin(await connected);
      } catch (err) {
        await drop();
        throw err;
      }
    },
    close: drop,
  };
}
