// Waiting until the ClickHouse hits readers are in their consumer group, one per node, and the
// group is Stable. world_initialize calls it between the DDL and the generator: a message that
// arrives while the second reader is still joining is read by the first, then read again after the
// rebalance (measured here: a whole day landed twice), since 18.16 commits only after its block is
// written. ODS collapses such repeats, but stg and the error log keep them.
import type { GroupDescription } from "kafkajs";
import { loadStandConfig, type StandConfig } from "../src/config/stand.ts";
import { HITS_CONSUMER_GROUP } from "../src/world/constants.ts";
import { sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/io.ts";
import { withKafkaAdmin, type KafkaTarget } from "./kafka-admin.ts";

const STEP = "waitForHitsReaders";

export interface WaitForHitsReadersInput extends TaskIo, KafkaTarget {
  /** Readers expected in the group: one per ClickHouse node when omitted. */
  members?: number;
  timeoutMs?: number;
  config?: StandConfig;
}

function describeGroup(group: GroupDescription | undefined): string {
  if (!group || group.state === "Dead") return "the group does not exist";
  return `state ${group.state}, ${group.members.length} member(s)${group.members.length > 0 ? ` (${group.members.map((m) => m.clientHost).join(", ")})` : ""}`;
}

export async function waitForHitsReaders(input: WaitForHitsReadersInput): Promise<void> {
  const wanted = input.members ?? (input.config ?? loadStandConfig()).clickhouse.nodes.length;
  const timeoutMs = input.timeoutMs ?? 60_000;
  throwIfAborted(input.signal, STEP);
  await withKafkaAdmin(input, "world-wait-readers", async (admin) => {
    const started = Date.now();
    for (;;) {
      const group = (await admin.describeGroups([HITS_CONSUMER_GROUP])).groups[0];
      if (group?.state === "Stable" && group.members.length === wanted) {
        input.log(`consumer group ${HITS_CONSUMER_GROUP}: Stable with ${wanted} readers after ${Date.now() - started} ms`);
        return;
      }
      if (Date.now() - started >= timeoutMs) {
        throw new WorldTaskError(
          STEP,
          `consumer group ${HITS_CONSUMER_GROUP} did not become Stable with ${wanted} readers within ${timeoutMs / 1000} s: ${describeGroup(group)}. ` +
            "Check that the hits DDL (90-hits-ingest.sql) was applied on every node and the ClickHouse logs for Kafka errors.",
        );
      }
      await sleepUnlessAborted(250, input.signal, STEP);
    }
  });
}
