// Per-partition offset tracking for at-least-once: a message is "handed out" when the consumer gives
// it to the loader and "placed" when its row or its dead letter is in ClickHouse. The offset safe to
// commit on a partition is the lowest offset handed out and not yet placed (Kafka commits the next
// offset to read), or one past the highest handed out when everything is placed. Offsets may have
// gaps (compaction, transaction markers); only handed-out offsets count.
import { partitionKey, type TopicPartition } from "./types.ts";

interface PartitionState {
  tp: TopicPartition;
  /** Handed-out offsets in increasing order, from `head` on; placed ones are removed from the front. */
  queue: bigint[];
  head: number;
  placed: Set<bigint>;
  /** One past the highest offset handed out. */
  next: bigint | undefined;
  /** The offset last reported as committed. */
  committed: bigint | undefined;
}

export interface CommitPoint extends TopicPartition {
  /** The next offset to read: every offset below it is placed. */
  offset: bigint;
}

export class OffsetOrderError extends Error {
  constructor(
    readonly tp: TopicPartition,
    readonly offset: bigint,
    readonly next: bigint,
  ) {
    super(`offset ${offset} handed out on ${partitionKey(tp)} after ${next - 1n}: a partition's offsets must increase`);
    this.name = new.target.name;
  }
}

export class OffsetTracker {
  private readonly partitions = new Map<string, PartitionState>();

  private state(tp: TopicPartition): PartitionState {
    const key = partitionKey(tp);
    let state = this.partitions.get(key);
    if (state === undefined) {
      state = { tp: { topic: tp.topic, partition: tp.partition }, queue: [], head: 0, placed: new Set(), next: undefined, committed: undefined };
      this.partitions.set(key, state);
    }
    return state;
  }

  /** Records a message given to the loader; offsets of one partition must come in increasing order. */
  handOut(tp: TopicPartition, offset: bigint): void {
    const state = this.state(tp);
    if (state.next !== undefined && offset < state.next) throw new OffsetOrderError(tp, offset, state.next);
    // The consumer read from here, so its group already stands at or past this offset: committing
    // it again would be a commit without progress.
    if (state.next === undefined && state.committed === undefined) state.committed = offset;
    state.queue.push(offset);
    state.next = offset + 1n;
  }

  /** Records that a handed-out message's row or dead letter is stored. */
  markPlaced(tp: TopicPartition, offset: bigint): void {
    const state = this.partitions.get(partitionKey(tp));
    if (state === undefined) return; // the partition was revoked meanwhile: nothing to commit for it
    state.placed.add(offset);
    while (state.head < state.queue.length) {
      const front = state.queue[state.head];
      if (front === undefined || !state.placed.has(front)) break;
      state.placed.delete(front);
      state.head++;
    }
    if (state.head > 1024 && state.head * 2 > state.queue.length) {
      state.queue = state.queue.slice(state.head);
      state.head = 0;
    }
  }

  /** The offset safe to commit on a partition, or undefined when nothing was handed out. */
  safeOffset(tp: TopicPartition): bigint | undefined {
    const state = this.partitions.get(partitionKey(tp));
    if (state === undefined) return undefined;
    return state.queue[state.head] ?? state.next;
  }

  /** Messages handed out and not placed yet, over every partition. */
  unplacedCount(): number {
    let count = 0;
    for (const state of this.partitions.values()) count += state.queue.length - state.head;
    return count;
  }

  /** Partitions whose safe offset moved past what was last committed: one commit's worth. */
  pendingCommits(): CommitPoint[] {
    const points: CommitPoint[] = [];
    for (const state of this.partitions.values()) {
      const offset = state.queue[state.head] ?? state.next;
      if (offset !== undefined && (state.committed === undefined || offset > state.committed)) {
        points.push({ ...state.tp, offset });
      }
    }
    return points;
  }

  /** Records a commit the broker accepted. */
  markCommitted(points: readonly CommitPoint[]): void {
    for (const point of points) {
      const state = this.partitions.get(partitionKey(point));
      if (state !== undefined && (state.committed === undefined || point.offset > state.committed)) state.committed = point.offset;
    }
  }

  /** Forgets partitions a rebalance took away: their next owner reads them from the committed offset. */
  revoke(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.partitions.delete(partitionKey(tp));
  }
}
