// The kafkajs loop for one topic: eachBatch hands messages to the loader core (no auto-commit, no
// auto-resolve); a timer runs flush cycles when a buffer is due; the core commits through
// consumer.commitOffsets once per cycle. A rebalance discards every buffered row before the next
// batch: kafkajs rebuilds its offset manager at each group sync and fetches every partition, kept or
// new, from the committed offset again. Shutdown stops fetching, flushes, commits, then leaves; the
// flush is bounded by drainTimeoutMs even when an insert hangs, and the consumer always disconnects.
// Each message is handed over with its Kafka headers normalised (headers.ts); a hot reload reaches
// the core through reconfigure.
import { setTimeout as sleep } from "node:timers/promises";
import type { Consumer, ConsumerConfig, EachBatchPayload, Kafka } from "kafkajs";
import type { LoaderConfig } from "../config/index.ts";
import { normaliseHeaders } from "./headers.ts";
import type { CycleReport, LoaderCore } from "./loader-core.ts";
import type { CommitPoint } from "./offsets.ts";
import type { TableBackoffState } from "./table-backoff.ts";
import { partitionKey, type TopicPartition } from "./types.ts";

/** kafkajs consumer settings the host may set (the group id and topic creation are ours). */
export type TopicConsumerSettings = Pick<ConsumerConfig, "minBytes" | "maxBytes" | "maxWaitTimeInMs" | "maxBytesPerPartition" | "sessionTimeout" | "rebalanceTimeout" | "heartbeatInterval">;

export interface TopicLoaderOptions {
  kafka: Kafka;
  topic: string;
  groupId: string;
  /** Builds the core with the commit function this loop provides. */
  createCore: (commit: (points: readonly CommitPoint[]) => Promise<void>) => LoaderCore;
  consumer?: TopicConsumerSettings;
  /** Above this many buffered rows a batch waits for flushes before taking more (backpressure). */
  maxBufferedRows?: number;
  /** How often the timer looks for due buffers. */
  tickMs?: number;
  /** How long shutdown may spend flushing before it disconnects anyway. */
  drainTimeoutMs?: number;
  fromBeginning?: boolean;
  /** Told the outcome of every background flush cycle: its report, or what it threw. */
  onCycle?: (report: CycleReport | undefined, thrown?: unknown) => void;
}

export type TopicLoaderState = "created" | "starting" | "running" | "stopping" | "stopped";

export interface TopicLoaderStatus {
  topic: string;
  groupId: string;
  state: TopicLoaderState;
  /** Whether a group join gave this member partitions of the topic. */
  joined: boolean;
  assigned: TopicPartition[];
  /** What this loader committed last, per partition. */
  committed: CommitPoint[];
  bufferedRows: number;
  /** Buffered rows of tables whose last flush was held. */
  heldRows: number;
  /** Messages handed out and not placed (rows and dead letters). */
  unplaced: number;
  pendingDeadLetters: number;
  sinkDown: boolean;
  heldTables: TableBackoffState[];
  /** The last flush cycle's error (a failed commit, or a cycle that threw); cleared by a clean cycle. */
  lastCycleError: string | undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Resolves with `work`'s value, or with undefined once `deadline` (ms since epoch) passes. */
async function untilDeadline<T>(work: Promise<T>, deadline: number): Promise<T | undefined> {
  const timeout = new AbortController();
  try {
    return await Promise.race([work, sleep(Math.max(0, deadline - Date.now()), undefined, { signal: timeout.signal, ref: false })]);
  } finally {
    timeout.abort();
  }
}

export class TopicLoader {
  readonly core: LoaderCore;
  private readonly consumer: Consumer;
  private state: TopicLoaderState = "created";
  private assigned: TopicPartition[] = [];
  private readonly committed = new Map<string, CommitPoint>();
  private revoking: Promise<unknown> = Promise.resolve();
  private inFlightBatch: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private cycleRunning = false;
  private revokePending = false;
  private running = false;
  private stopping = false;
  private requestStop: () => void = () => undefined;
  private readonly stopRequested = new Promise<void>((resolve) => (this.requestStop = resolve));
  private stopped: Promise<void> | undefined;
  private readonly firstJoin: Promise<void>;
  private settleJoin: { resolve: () => void; reject: (err: Error) => void } | undefined;
  /** The last flush cycle's error; cleared by a cycle without one. */
  lastCycleError: unknown;
  /** When kafkajs last began a fetch, or a batch of this loader ended (ms since epoch). */
  private lastFetchAt = Date.now();
  private batchesInFlight = 0;
  /** The options of the last reconfigure: a core built after it starts with them, not with its wiring's. */
  private reloaded: LoaderConfig | undefined;

  constructor(private readonly options: TopicLoaderOptions) {
    this.consumer = options.kafka.consumer({ ...options.consumer, groupId: options.groupId, allowAutoTopicCreation: false });
    this.core = this.buildCore();
    this.firstJoin = new Promise<void>((resolve, reject) => (this.settleJoin = { resolve, reject }));
    // joined() hands this promise out; a rejection nobody asked for must not crash the process.
    this.firstJoin.catch(() => undefined);
  }

  /** Builds the core (createCore) with the options a reload put in force, if one did. */
  private buildCore(): LoaderCore {
    const core = this.options.createCore((points) => this.commit(points));
    if (this.reloaded !== undefined) core.reconfigure(this.reloaded);
    return core;
  }

  /** Options from a hot reload: in force in the core from its next message and cycle on, and in any core built later. */
  reconfigure(config: LoaderConfig): void {
    this.reloaded = config;
    this.core.reconfigure(config);
  }

  async start(): Promise<void> {
    const { consumer } = this;
    this.state = "starting";
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.onGroupJoin(payload.memberAssignment));
    consumer.on(consumer.events.FETCH_START, () => (this.lastFetchAt = Date.now()));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) this.settleJoin?.reject(new Error(`the consumer of ${this.options.topic} crashed before joining: ${payload.error.message}`));
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [this.options.topic], fromBeginning: this.options.fromBeginning ?? true });
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: (payload) => this.trackBatch(payload) });
    this.running = true;
    const tick = this.options.tickMs ?? 50;
    this.timer = setInterval(() => void this.backgroundCycle(), tick);
  }

  /** Resolves at the first group join (this member's partitions of the topic assigned, none for a
   * member standing by); rejects if the loader stops or its consumer crashes for good before that. */
  joined(): Promise<void> {
    return this.firstJoin;
  }

  assignedPartitions(): TopicPartition[] {
    return this.assigned.map((tp) => ({ ...tp }));
  }

  /** The offsets this loader committed last, per partition (the next offset to read). */
  committedOffsets(): CommitPoint[] {
    return [...this.committed.values()].map((p) => ({ ...p })).sort((a, b) => a.partition - b.partition);
  }

  status(): TopicLoaderStatus {
    const core = this.core.status();
    return {
      topic: this.options.topic,
      groupId: this.options.groupId,
      state: this.state,
      joined: this.settleJoin === undefined,
      assigned: this.assignedPartitions(),
      committed: this.committedOffsets(),
      bufferedRows: core.bufferedRows,
      heldRows: core.heldRows,
      unplaced: core.unplaced,
      pendingDeadLetters: core.pendingDeadLetters,
      sinkDown: core.gate.down,
      heldTables: core.heldTables,
      lastCycleError: this.lastCycleError === undefined ? undefined : errorText(this.lastCycleError),
    };
  }

  /** One line for logs and health: state, partitions, rows buffered and held, the sink, errors. */
  describe(): string {
    const s = this.status();
    const held = s.heldTables.map((t) => `${t.table} held ${t.holds}× by ${t.heldBy.reason}`).join(", ");
    return [
      `${s.topic} ${s.state}`,
      `partitions [${s.assigned.map((tp) => tp.partition).join(",")}]`,
      `${s.bufferedRows} rows buffered (${s.heldRows} held)`,
      `${s.pendingDeadLetters} dead letters waiting`,
      s.sinkDown ? "sink DOWN" : "sink up",
      ...(held === "" ? [] : [held]),
      ...(s.lastCycleError === undefined ? [] : [`last cycle error: ${s.lastCycleError}`]),
    ].join(", ");
  }

  /** Stops fetching, flushes what was read (within drainTimeoutMs), commits, leaves the group.
   * A second call waits for the first. */
  stop(): Promise<void> {
    this.stopped ??= this.shutDown();
    return this.stopped;
  }

  private async shutDown(): Promise<void> {
    this.state = "stopping";
    this.stopping = true;
    this.requestStop();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.settleJoin?.reject(new Error(`the loader of ${this.options.topic} stopped before joining its group`));
    const deadline = Date.now() + (this.options.drainTimeoutMs ?? 10_000);
    try {
      if (this.running) this.consumer.pause([{ topic: this.options.topic }]);
      await untilDeadline(this.inFlightBatch, deadline);
      await untilDeadline(this.revoking, deadline);
      await this.drain(deadline);
    } finally {
      await this.consumer.disconnect();
      this.state = "stopped";
    }
  }

  /** Flush cycles until everything read is placed or the deadline passes: the first ignores the
   * backoffs (one last try for every table), later ones wait for them. */
  private async drain(deadline: number): Promise<void> {
    for (let first = true; Date.now() < deadline; first = false) {
      const status = this.core.status();
      if (status.unplaced === 0 && status.pendingDeadLetters === 0) return;
      const report = await untilDeadline(this.core.runCycle({ all: true, ignoreBackoff: first }), deadline);
      if (report === undefined) return; // a cycle still waiting on the sink at the deadline
      if (report.rowsLanded + report.deadLettersWritten + report.deadLettersDropped > 0) continue;
      const retryAt = this.core.nextRetryAt() ?? 0;
      await sleep(Math.max(10, Math.min(retryAt - Date.now(), deadline - Date.now())));
    }
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    const previous = this.assigned;
    this.assigned = (assignment[this.options.topic] ?? []).map((partition) => ({ topic: this.options.topic, partition }));
    // Every partition restarts from its committed offset after a sync: drop all rows read before it.
    if (previous.length > 0) {
      this.revokePending = true;
      const revoking = this.core.revoke(previous).finally(() => {
        if (this.revoking === revoking) this.revokePending = false;
      });
      this.revoking = revoking;
    }
    // A join is a join even with no partition: in a group of loaders with more members than the
    // topic has partitions (orders has one), the others stand by and take partitions over when a
    // member leaves or dies. A lone member of an existing topic is always given every partition.
    if (this.settleJoin !== undefined) {
      this.settleJoin.resolve();
      this.settleJoin = undefined;
      if (this.state === "starting") this.state = "running";
    }
  }

  private trackBatch(payload: EachBatchPayload): Promise<void> {
    this.batchesInFlight++;
    const run = this.handleBatch(payload).finally(() => {
      this.batchesInFlight--;
      this.lastFetchAt = Date.now();
    });
    this.inFlightBatch = run.catch(() => undefined);
    return run;
  }

  /**
   * How long kafkajs's fetch loop has been silent while this loader runs and holds no batch (0
   * otherwise). kafkajs begins a fetch at least every maxWaitTimeInMs, data or not; a batch held by
   * backpressure or a sink that is down is not silence. A loop that stays silent has died without a
   * word, as kafkajs's can after a broker restart (tulios/kafkajs#659): the group stays joined, the
   * member looks healthy, and nothing is read again.
   */
  fetchSilenceMs(now: number): number {
    if (!this.running || this.stopping || this.batchesInFlight > 0 || this.state !== "running" || this.assigned.length === 0) return 0;
    return Math.max(0, now - this.lastFetchAt);
  }

  private async handleBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const live = () => !this.stopping && payload.isRunning() && !payload.isStale();
    // A revocation waits for a running cycle, which may wait on a sink that is down: stop() must
    // not wait for it through this batch (kafkajs disconnects only after eachBatch returns).
    if (this.revokePending) await Promise.race([this.revoking, this.stopRequested]);
    if (!live()) return;
    for (const message of batch.messages) {
      this.core.accept({ topic: batch.topic, partition: batch.partition, offset: BigInt(message.offset), key: message.key, value: message.value, headers: normaliseHeaders(message.headers) });
      // resolved = handed to the loader (kafkajs's fetch position); commits stay ours
      payload.resolveOffset(message.offset);
    }
    const maxBuffered = this.options.maxBufferedRows ?? 200_000;
    while (live() && this.core.status().bufferedRows >= maxBuffered) {
      void this.backgroundCycle(); // not awaited: a cycle stuck on the sink must not keep stop() waiting here
      await sleep(20);
      await payload.heartbeat();
    }
  }

  private async backgroundCycle(): Promise<void> {
    if (this.cycleRunning || !this.core.isDue()) return;
    this.cycleRunning = true;
    try {
      const report = await this.core.runCycle();
      this.lastCycleError = report.commitError;
      this.options.onCycle?.(report);
    } catch (err) {
      this.lastCycleError = err;
      this.options.onCycle?.(undefined, err);
    } finally {
      this.cycleRunning = false;
    }
  }

  /**
   * Commits a cycle's offsets, unless the group was joined again since its rows were read (a
   * revocation is pending behind the cycle): those partitions restart from the offsets the group
   * had at the join, so a commit now would be followed by commits of the replayed, lower offsets
   * (seen with the loader frozen past its session timeout between its INSERTs and its commit). The
   * rows are read again from the committed offset and placed again (ODS keeps each hit once).
   */
  private async commit(points: readonly CommitPoint[]): Promise<void> {
    if (this.revokePending) {
      throw new Error(`not committed: the group of ${this.options.topic} was joined again since these rows were read; they are read again from the committed offset`);
    }
    await this.consumer.commitOffsets(points.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.offset.toString() })));
    for (const point of points) this.committed.set(partitionKey(point), { ...point });
  }
}
