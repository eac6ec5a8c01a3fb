// Deleting the world's consumer groups (world_recreate, after the readers are dropped), so a new
// world's readers start from offset zero. A group still held by a live reader cannot be deleted:
// that is reported as such, naming the members, rather than as a broker error code.
import type { Admin, GroupDescription } from "kafkajs";
import { WORLD_CONSUMER_GROUPS, sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { withKafkaAdmin, type KafkaTarget } from "./kafka-admin.ts";
import { errorMessage } from "../src/errors.ts";
import { loadStandConfig } from "../src/config/index.ts";

const STEP = "deleteConsumerGroups";

export interface DeleteConsumerGroupsInput extends TaskIo, KafkaTarget {
  /** clickstream_hits and clickstream_orders when omitted. */
  groups?: readonly string[];
  /**
   * How long a group may take to empty. A reader dropped a moment ago is still leaving its group
   * (ClickHouse closes the consumer on DROP, the broker notices within a few seconds). Default:
   * the stand's kafka.group_leave_grace_seconds (15 s; 5 s on the test stand).
   */
  leaveGraceMs?: number;
}

function describeMembers(group: GroupDescription): string {
  return group.members.map((m) => `${m.clientId} from ${m.clientHost}`).join("; ");
}

/**
 * A reader dropped while it was joining leaves its group in PreparingRebalance with no members listed:
 * the broker refuses to delete it (NON_EMPTY_GROUP) until the rebalance ends, which takes up to the
 * consumer's session timeout (librdkafka in ClickHouse 18.16: 45 s). Measured on the test stand: the
 * group was Empty about a minute after the drop.
 */
export const REBALANCE_GRACE_MS = 90_000;

/** Deletable: gone, or Empty/Dead with no members. */
function deletable(group: GroupDescription | undefined): boolean {
  return !group || (group.members.length === 0 && (group.state === "Empty" || group.state === "Dead"));
}

/** Waits until the group can be deleted; the last description when it still cannot at the deadline.
 * Members must leave within graceMs; a memberless rebalance may take REBALANCE_GRACE_MS. */
async function waitUntilEmpty(admin: Admin, groupId: string, graceMs: number, io: TaskIo): Promise<GroupDescription | undefined> {
  const started = Date.now();
  let lastReport = 0;
  for (;;) {
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups[0];
    if (deletable(group) || !group) return undefined;
    const waited = Date.now() - started;
    const limit = group.members.length === 0 ? Math.max(graceMs, REBALANCE_GRACE_MS) : graceMs;
    if (waited >= limit) return group;
    if (waited - lastReport >= 10_000) {
      lastReport = waited;
      io.log(`consumer group ${groupId}: ${group.state} with ${group.members.length} member(s); waiting for it to empty (${Math.round(waited / 1000)} s of ${limit / 1000} s)`);
    }
    await sleepUnlessAborted(500, io.signal, STEP);
  }
}

function heldByReader(group: GroupDescription): WorldTaskError {
  if (group.members.length === 0) {
    return new WorldTaskError(
      STEP,
      `consumer group '${group.groupId}' is in state ${group.state} with no members after ${REBALANCE_GRACE_MS / 1000} s: a reader was dropped ` +
        "while joining and the broker has not ended that rebalance yet (it does within the consumer's session timeout). Run this again in a minute.",
    );
  }
  return new WorldTaskError(
    STEP,
    `consumer group '${group.groupId}' is still held by ${group.members.length} live consumer(s) (${describeMembers(group)}), ` +
      "so Kafka will not delete it. A ClickHouse Kafka reader still exists: drop the stg database first " +
      "(dropApplicationDatabases; world_recreate does it before this step), then run this again.",
  );
}

/** Deletes the groups that exist; a group with live members after the grace period is an error. */
export async function deleteConsumerGroups(input: DeleteConsumerGroupsInput): Promise<void> {
  const wanted = input.groups ?? WORLD_CONSUMER_GROUPS;
  throwIfAborted(input.signal, STEP);
  await withKafkaAdmin(input, "world-delete-groups", async (admin) => {
    const listed = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
    const present = wanted.filter((g) => listed.has(g));
    for (const name of wanted.filter((g) => !listed.has(g))) input.log(`consumer group ${name}: does not exist`);
    for (const groupId of present) {
      const graceMs = input.leaveGraceMs ?? (input.config ?? loadStandConfig()).kafka.group_leave_grace_seconds * 1000;
      const stillHeld = await waitUntilEmpty(admin, groupId, graceMs, input);
      if (stillHeld) throw heldByReader(stillHeld);
    }
    if (present.length === 0) return;
    try {
      await admin.deleteGroups([...present]);
    } catch (err) {
      throw await explainDeleteFailure(admin, err);
    }
    input.log(`consumer groups deleted: ${present.join(", ")}`);
  });
}

/** Turns kafkajs's per-group failures into one message; a group that was joined meanwhile is named as held. */
async function explainDeleteFailure(admin: Admin, err: unknown): Promise<WorldTaskError> {
  const failed = (err as { groups?: { groupId: string; error?: { type?: string; message?: string } }[] }).groups ?? [];
  const nonEmpty = failed.find((g) => g.error?.type === "NON_EMPTY_GROUP");
  if (nonEmpty) {
    const { groups } = await admin.describeGroups([nonEmpty.groupId]);
    if (groups[0]) return heldByReader(groups[0]);
  }
  const real = failed.filter((g) => g.error?.type !== "GROUP_ID_NOT_FOUND");
  if (failed.length > 0 && real.length === 0) return new WorldTaskError(STEP, "groups vanished while being deleted (nothing left to do)");
  const detail = real.map((g) => `${g.groupId}: ${g.error?.message ?? "unknown error"}`).join("; ") || errorMessage(err);
  return new WorldTaskError(STEP, `deleting consumer groups failed: ${detail}`, { cause: err });
}
