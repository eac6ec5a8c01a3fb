// The world's ingest waits read the loader's committed offsets. The loader (src/loader, docs/loader.md)
// commits a message only once it is placed: its row inserted (the hits with
// insert_distributed_sync = 1, so ODS holds it on both shards by then) or its dead letter stored.
// So "the group has committed the end offset of every partition" means "everything sent so far is
// in ClickHouse", with no guess about flush delays and no Stable-group wait.
import { groupProgress, topicEndOffsets, type GroupProgress, type OffsetsByPartition, controlPool, describeLoaders, readLoaderStatuses } from "../src/loader/index.ts";
import type { StandConfig } from "../src/config/index.ts";
import { rideOutTransient, sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { withKafkaAdmin } from "./kafka-admin.ts";
import { errorMessage } from "../src/errors.ts";
import { NonRetryableError } from "../src/runner/index.ts";
import { describeFindings, quietStandContext, safeStandFindings, type Finding } from "../src/stand/index.ts";

const STEP = "waitForLoaderCommitted";
/** A wait that has not moved for this long says why, from the stand's findings; then once a minute. */
const STALL_MS = 60_000;

/**
 * Watches a wait's progress count: once it has not moved for a minute, logs what the stand says is
 * wrong (services down or crash-looping, the loader's held rows and their codes), and fails the
 * wait at once when a finding cannot clear by itself (a crash-looping service) instead of letting
 * it spend its tries.
 */
export interface StallWatchDeps {
  now?: () => number;
  /** What is wrong with the stand now (default: src/stand/diagnose.ts on the config's stand). */
  findings?: () => Promise<Finding[]>;
}

export class StallWatch {
  private lastDone = -1;
  private movedAt: number;
  private saidAt = 0;
  private readonly now: () => number;
  private readonly findings: () => Promise<Finding[]>;

  constructor(config: StandConfig | undefined, deps: StallWatchDeps = {}) {
    this.now = deps.now ?? Date.now;
    this.findings = deps.findings ?? (() => safeStandFindings(quietStandContext(config)));
    this.movedAt = this.now();
  }

  async look(done: number, log: (line: string) => void, where: string): Promise<void> {
    const now = this.now();
    if (done !== this.lastDone) {
      this.lastDone = done;
      this.movedAt = now;
      return;
    }
    if (now - this.movedAt < STALL_MS || now - this.saidAt < STALL_MS) return;
    this.saidAt = now;
    const findings = await this.findings();
    const stuck = `no progress for ${((now - this.movedAt) / 1000).toFixed(0)} s (${where})`;
    log(`${stuck}; why: ${describeFindings(findings)}`);
    const permanent = findings.filter((f) => f.permanent);
    if (permanent.length > 0) {
      // not retried: another try would wait on the same dead service
      throw new NonRetryableError(`${STEP}: ${stuck}, and it cannot clear by itself: ${describeFindings(permanent)}. make doctor lists what is wrong and what to do.`);
    }
  }
}

/** The loader's status for a progress line; Postgres away (a restart) is said, not thrown: the wait is on Kafka. */
async function loaderLine(config: StandConfig | undefined): Promise<string> {
  const db = controlPool(config);
  try {
    return describeLoaders(await readLoaderStatuses(db));
  } catch (err) {
    return `loader status unreadable (${errorMessage(err)})`;
  } finally {
    await db.end().catch(() => undefined);
  }
}

export interface WaitForCommittedInput extends TaskIo {
  topic: string;
  group: string;
  /** Wait for these end offsets; the topic's current ones when omitted. */
  ends?: OffsetsByPartition;
  timeoutMs: number;
  config?: StandConfig;
}

export interface Committed extends GroupProgress {
  seconds: number;
}

/** Polls the group's committed offsets until they reach the ends; progress every 5 s, a named timeout. */
export async function waitForLoaderCommitted(input: WaitForCommittedInput): Promise<Committed> {
  const started = Date.now();
  return withKafkaAdmin({ config: input.config }, "world-wait-committed", async (admin) => {
    const ends = input.ends ?? (await topicEndOffsets(admin, input.topic));
    let lastLog = started;
    const stall = new StallWatch(input.config);
    for (;;) {
      throwIfAborted(input.signal, STEP);
      const progress = await rideOutTransient("reading the group's offsets", () => groupProgress(admin, input.topic, input.group, ends), {
        signal: input.signal,
        step: STEP,
        log: input.log,
        deadline: started + input.timeoutMs,
      });
      const seconds = (Date.now() - started) / 1000;
      if (progress.done >= progress.total) return { ...progress, seconds };
      await stall.look(progress.done, input.log, `group ${input.group} at ${progress.done} of ${progress.total} messages of topic ${input.topic}`);
      if (Date.now() - lastLog >= 5000 || Date.now() - started >= input.timeoutMs) {
        lastLog = Date.now();
        const line = `group ${input.group} committed ${progress.done} of ${progress.total} messages of topic ${input.topic}; ${await loaderLine(input.config)}`;
        if (Date.now() - started >= input.timeoutMs) {
          throw new WorldTaskError(
            STEP,
            `the loader did not place everything within ${input.timeoutMs / 1000} s: ${line}. ` +
              "Look at the loader's /metrics (loader_sink_down, loader_consumer_lag) and its log, and at make check-services.",
          );
        }
        input.log(`after ${seconds.toFixed(0)} s: ${line}`);
      }
      await sleepUnlessAborted(100, input.signal, STEP);
    }
  });
}
