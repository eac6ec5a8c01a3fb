// How far a consumer group is through a topic, in one place: the loader's lag gauges, the world's
// ingest waits and the benchmarks all read it the same way (end offset and committed offset per
// partition; a partition the group never committed counts from 0).
import type { Admin } from "kafkajs";

/** Offsets per partition. */
export type OffsetsByPartition = ReadonlyMap<number, number>;

export interface GroupProgress {
  /** End offset (high watermark) per partition: the target. */
  ends: OffsetsByPartition;
  /** Committed offset per partition kafkajs reports (0 where the group has none yet). */
  committed: OffsetsByPartition;
  /** Messages below the ends, and how many of them are committed. */
  total: number;
  done: number;
}

export async function topicEndOffsets(admin: Admin, topic: string): Promise<Map<number, number>> {
  return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
}

/** The group's committed offset per partition of `topic`; kafkajs' -1 (none yet) reads as 0. */
export async function committedOffsets(admin: Admin, group: string, topic: string): Promise<Map<number, number>> {
  const [fetched] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  return new Map((fetched?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))]));
}

/** The group's progress towards `ends` (read now when not given). */
export async function groupProgress(admin: Admin, topic: string, group: string, ends?: OffsetsByPartition): Promise<GroupProgress> {
  const [target, committed] = await Promise.all([ends ?? topicEndOffsets(admin, topic), committedOffsets(admin, group, topic)]);
  let total = 0;
  let done = 0;
  for (const [partition, end] of target) {
    total += end;
    done += Math.min(end, committed.get(partition) ?? 0);
  }
  return { ends: target, committed, total, done };
}

/** Messages of `partition` below its end that the group has not committed. */
export function partitionLag(progress: GroupProgress, partition: number): number {
  const end = progress.ends.get(partition) ?? 0;
  return Math.max(0, end - (progress.committed.get(partition) ?? 0));
}
