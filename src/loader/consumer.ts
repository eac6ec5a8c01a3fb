// The kafkajs loop for one topic: eachBatch hands messages to the loader core (no auto-commit, no
// auto-resolve); a timer runs flush cycles when a buffer is due; the core commits through
// consumer.commitOffsets once per cycle. A rebalance discards every buffered row before the next
// batch: kafkajs rebuilds its offset manager at each group sync and fetches every partition, kept or
// new, from the committed offset again. Shutdown stops fetching, flushes, commits, then leaves.
import { setTimeout as sleep } from "node:timers/promises";
import type { Consumer, EachBatchPayload, Kafka } from "kafkajs";
import type { LoaderCore } from "./flush-cycle.ts";
import type { CommitPoint } from "./offsets.ts";
import type { TopicPartition } from "./types.ts";

export interface TopicLoaderOptions {
  kafka: Kafka;
  topic: string;
  groupId: string;
  /** Builds the core with the commit function this loop provides. */
  createCore: (commit: (points: readonly CommitPoint[]) => Promise<void>) => LoaderCore;
  /** Above this many buffered rows a batch waits for flushes before taking more (backpressure). */
  maxBufferedRows?: number;
  /** How often the timer looks for due buffers. */
  tickMs?: number;
  /** How long shutdown may spend flushing. */
  drainTimeoutMs?: number;
  fromBeginning?: boolean;
}

export class TopicLoader {
  readonly core: LoaderCore;
  private readonly consumer: Consumer;
  private assigned: TopicPartition[] = [];
  private revoking: Promise<unknown> = Promise.resolve();
  private inFlightBatch: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private cycleRunning = false;
  /** The last error of a background cycle, for the caller's health check. */
  lastCycleError: unknown;

  constructor(private readonly options: TopicLoaderOptions) {
    this.consumer = options.kafka.consumer({ groupId: options.groupId, allowAutoTopicCreation: false });
    this.core = options.createCore((points) => this.commit(points));
  }

  async start(): Promise<void> {
    const { consumer } = this;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.onGroupJoin(payload.memberAssignment));
    await consumer.connect();
    await consumer.subscribe({ topics: [this.options.topic], fromBeginning: this.options.fromBeginning ?? true });
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => this.trackBatch(payload) });
    const tick = this.options.tickMs ?? 50;
    this.timer = setInterval(() => void this.backgroundCycle(), tick);
  }

  /** Stops fetching, flushes what was read (within the drain timeout), commits, leaves the group. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.consumer.pause([{ topic: this.options.topic }]);
    await this.inFlightBatch;
    await this.revoking;
    const deadline = Date.now() + (this.options.drainTimeoutMs ?? 10_000);
    while (Date.now() < deadline) {
      const status = this.core.status();
      if (status.unplaced === 0 && status.pendingDeadLetters === 0) break;
      const report = await this.core.runCycle({ all: true });
      if (!report.ran) await sleep(Math.max(10, Math.min(report.gate.retryAt - Date.now(), deadline - Date.now())));
    }
    await this.consumer.disconnect();
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    const previous = this.assigned;
    this.assigned = (assignment[this.options.topic] ?? []).map((partition) => ({ topic: this.options.topic, partition }));
    // Every partition restarts from its committed offset after a sync: drop all rows read before it.
    if (previous.length > 0) this.revoking = this.core.revoke(previous);
  }

  private trackBatch(payload: EachBatchPayload): Promise<void> {
    const run = this.handleBatch(payload);
    this.inFlightBatch = run.catch(() => undefined);
    return run;
  }

  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const live = () => !this.stopping && payload.isRunning() && !payload.isStale();
    await this.revoking;
    if (!live()) return;
    for (const message of batch.messages) {
      this.core.accept({ topic: batch.topic, partition: batch.partition, offset: BigInt(message.offset), key: message.key, value: message.value });
      // resolved = handed to the loader (kafkajs's fetch position); commits stay ours
      payload.resolveOffset(message.offset);
    }
    const maxBuffered = this.options.maxBufferedRows ?? 200_000;
    while (live() && this.core.status().bufferedRows >= maxBuffered) {
      await this.backgroundCycle();
      await sleep(20);
      await payload.heartbeat();
    }
  }

  private async backgroundCycle(): Promise<void> {
    if (this.cycleRunning || !this.core.isDue()) return;
    this.cycleRunning = true;
    try {
      const report = await this.core.runCycle();
      if (report.commitError !== undefined) this.lastCycleError = report.commitError;
    } catch (err) {
      this.lastCycleError = err;
    } finally {
      this.cycleRunning = false;
    }
  }

  private async commit(points: readonly CommitPoint[]): Promise<void> {
    await this.consumer.commitOffsets(points.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.offset.toString() })));
  }
}
