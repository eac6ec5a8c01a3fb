// Kafka plumbing of the ingest benchmarks, for their own topics and consumer groups only (never the
// world's): topic create/delete through the world's task functions, a group's committed total against
// the topic's end, waits for a group's members.
import type { Admin } from "kafkajs";
import type { TaskIo } from "../src/world/index.ts";
import { groupProgress } from "../src/loader/index.ts";
import { deleteConsumerGroups, withKafkaAdmin, createTopics, deleteTopics } from "../tasks/index.ts";

export const quietIo: TaskIo = { signal: new AbortController().signal, log: () => undefined };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Deletes the topic if a previous run left it, then creates it with `partitions` partitions. */
export async function freshTopic(topic: string, partitions: number): Promise<void> {
  await deleteTopics({ ...quietIo, topics: [topic] });
  await createTopics({ ...quietIo, topics: [{ name: topic, partitions }] });
}

export async function dropTopic(topic: string): Promise<void> {
  await deleteTopics({ ...quietIo, topics: [topic] });
}

/** Deletes the groups once their members left (a dropped Kafka-engine reader may take a minute). */
export async function dropGroups(groups: readonly string[]): Promise<void> {
  await deleteConsumerGroups({ ...quietIo, groups, leaveGraceMs: 30_000 });
}

export async function withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
  return withKafkaAdmin({}, "ingest-bench", work);
}

/** Waits until the group is Stable with exactly `members` members; the error says what it saw. */
export async function waitForMembers(admin: Admin, groupId: string, members: number, timeoutMs = 90_000): Promise<void> {
  const started = Date.now();
  let seen = "the group does not exist";
  let lastLog = started;
  for (;;) {
    const group = (await admin.describeGroups([groupId])).groups[0];
    seen = group ? `state ${group.state}, ${group.members.length} member(s)` : seen;
    if (members === 0 ? !group || group.members.length === 0 : group?.state === "Stable" && group.members.length === members) return;
    if (Date.now() - started > timeoutMs) {
      throw new Error(`consumer group ${groupId} did not reach ${members} member(s)${members > 0 ? ", Stable," : ""} within ${timeoutMs / 1000} s: ${seen}`);
    }
    if (Date.now() - lastLog >= 5000) {
      lastLog = Date.now();
      console.log(`  waiting for consumer group ${groupId} to have ${members} member(s): ${seen} after ${Math.round((Date.now() - started) / 1000)} s`);
    }
    await sleep(200);
  }
}

export interface DrainSample {
  /** Milliseconds since the drain started. */
  atMs: number;
  committed: number;
}

export interface Drain {
  total: number;
  seconds: number;
  samples: DrainSample[];
}

/**
 * Polls the group's committed offsets every `pollMs` from `startedAt` until they reach the topic's
 * end (`total` messages from offset 0); prints progress every 5 s with counts.
 */
export async function waitForDrain(admin: Admin, groupId: string, topic: string, startedAt: number, timeoutMs = 600_000, pollMs = 100): Promise<Drain> {
  const samples: DrainSample[] = [];
  let lastLog = Date.now();
  for (;;) {
    const progress = await groupProgress(admin, topic, groupId);
    const atMs = performance.now() - startedAt;
    samples.push({ atMs, committed: progress.done });
    if (progress.total > 0 && progress.done >= progress.total) return { total: progress.total, seconds: atMs / 1000, samples };
    if (atMs > timeoutMs) {
      throw new Error(`consumer group ${groupId} committed ${progress.done} of ${progress.total} messages of ${topic} within ${timeoutMs / 1000} s`);
    }
    if (Date.now() - lastLog >= 5000) {
      lastLog = Date.now();
      console.log(`  waiting for group ${groupId} to commit the end of ${topic}: ${progress.done} of ${progress.total} after ${(atMs / 1000).toFixed(0)} s`);
    }
    await sleep(pollMs);
  }
}
