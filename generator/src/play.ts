// The three ways of playing the world: `batch` (days as fast as the sink takes them), `live` (one
// day paced on the model clock) and `snapshot` (order snapshots). They share the sinks and the
// progress line; the world itself is built by day.ts and orders.ts.
import type { LiveConfig, Output, PlayConfig } from "./config.ts";
import { DayRenderer, World, type DayCounts } from "./day.ts";
import { formatCount, type Logger } from "./log.ts";
import { PlanCache, buildSnapshot } from "./orders.ts";
import type { Message } from "./frames.ts";
import { FileSink, KafkaSink, type MessageSink } from "./sink.ts";
import { generateChunks } from "./day-chunks.ts";

export async function openSink(output: Output, logger: Logger): Promise<MessageSink> {
  if (output.kind === "file") return new FileSink(output.path);
  return KafkaSink.connect({ brokers: output.brokers, topic: output.topic, inFlight: output.inFlight, batchBytes: output.batchBytes, logger });
}

/** Logs "sent / total, rate" at most every `everyMs`, and once more at the end. */
class Progress {
  private readonly startedMs = Date.now();
  private lastLogMs = this.startedMs;
  sent = 0;
  /** A batch plans day by day; until its last day is planned the total is an estimate ("~"). */
  estimated = false;

  constructor(
    private readonly label: string,
    public total: number,
    private readonly logger: Logger,
    private readonly everyMs = 2_000,
  ) {}

  add(count: number): void {
    this.sent += count;
    const now = Date.now();
    if (now - this.lastLogMs >= this.everyMs) {
      this.lastLogMs = now;
      this.log();
    }
  }

  log(suffix = ""): void {
    const seconds = Math.max(0.001, (Date.now() - this.startedMs) / 1000);
    const percent = this.total > 0 ? ((100 * this.sent) / this.total).toFixed(1) : "100.0";
    this.logger.info(`${this.label}: ${formatCount(this.sent)}/${this.estimated ? "~" : ""}${formatCount(this.total)} sent (${percent}%), ` +
      `${formatCount(this.sent / seconds)} msg/s${suffix}`);
  }

  get seconds(): number {
    return (Date.now() - this.startedMs) / 1000;
  }
}

export interface DayReport {
  readonly day: number;
  readonly date: string;
  readonly sent: number;
  readonly counts: DayCounts;
}

export interface PlayReport {
  readonly sent: number;
  readonly seconds: number;
  readonly days: readonly DayReport[];
}

function describeCounts(c: DayCounts): string {
  const invalid = Object.entries(c.invalid).map(([k, v]) => `${k} ${v}`).join(", ");
  return `${formatCount(c.valid)} valid, invalid: ${invalid}`;
}

/**
 * Plays days as fast as the sink accepts them: hits are rendered straight into frame chunks (bytes)
 * and sent chunk by chunk; batches stay in flight across day boundaries.
 */
export async function runBatch(config: PlayConfig, logger: Logger): Promise<PlayReport> {
  const label = `batch days ${config.day}…${config.day + config.days - 1}`;
  const sink = await openSink(config.output, logger);
  logger.info(`batch: seed ${config.seed} (${config.size} world), days ${config.day}…${config.day + config.days - 1} → ${sink.description}`);
  const reports: DayReport[] = [];
  const progress = new Progress(label, 0, logger);
  let plannedSoFar = 0;
  try {
    const source = generateChunks({ seed: config.seed, size: config.size, day: config.day, days: config.days, limit: config.limit, chunkBytes: config.output.batchBytes });
    for (const event of source) {
      if (event.type === "planned") {
        // Days still unplanned are counted at the size of the days planned so far.
        plannedSoFar += event.total;
        const daysPlanned = event.day - config.day + 1;
        progress.estimated = daysPlanned < config.days && plannedSoFar < config.limit;
        progress.total = Math.min(config.limit, progress.estimated ? Math.round((plannedSoFar / daysPlanned) * config.days) : plannedSoFar);
      } else if (event.type === "chunk") {
        await sink.sendFrames(event.chunk);
        progress.add(event.chunk.count);
      } else {
        reports.push({ day: event.day, date: event.date, sent: event.sent, counts: event.counts });
        logger.info(`day ${event.day} (${event.date}): ${formatCount(event.sent)} hits queued; ${describeCounts(event.counts)}`);
      }
    }
    await sink.flush();
  } finally {
    await sink.close();
  }
  progress?.log(", done");
  return { sent: progress?.sent ?? 0, seconds: progress?.seconds ?? 0, days: reports };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Plays one day on the model clock: a hit at second s of the counter day leaves s / speed wall
 * seconds after the start. Whatever is due is sent at once, so a slow sink shows up as lag.
 */
export async function runLive(config: LiveConfig, logger: Logger): Promise<PlayReport> {
  const renderer = new DayRenderer(new World(config.seed, config.size), config.day);
  const progress = new Progress(`live day ${config.day}`, renderer.total, logger, config.lagLogSeconds * 1000);
  const sink = await openSink(config.output, logger);
  logger.info(`live: day ${config.day} (${renderer.date}), ×${config.speed}, ${formatCount(renderer.total)} hits → ${sink.description}`);
  const startMs = Date.now();
  const dueMs = (position: number): number => (renderer.second(position) * 1000) / config.speed;
  let position = 0;
  let lastLagLogMs = startMs;
  try {
    while (position < renderer.total) {
      const elapsedMs = Date.now() - startMs;
      const batch: Message[] = [];
      let bytes = 0;
      while (position < renderer.total && dueMs(position) <= elapsedMs && batch.length < config.output.batchSize && bytes < config.output.batchBytes) {
        const value = renderer.line(position);
        batch.push({ key: renderer.key(position), value });
        bytes += value.length;
        position += 1;
      }
      if (batch.length > 0) {
        await sink.send(batch);
        await sink.flush();
        progress.add(batch.length);
      }
      if (Date.now() - lastLagLogMs >= config.lagLogSeconds * 1000) {
        lastLagLogMs = Date.now();
        logLag(logger, renderer, position, Date.now() - startMs, config.speed, dueMs);
      }
      if (position < renderer.total && batch.length === 0) {
        await sleep(Math.min(Math.max(1, dueMs(position) - (Date.now() - startMs)), config.lagLogSeconds * 1000));
      }
    }
    await sink.flush();
  } finally {
    await sink.close();
  }
  progress.log(", day done");
  return { sent: progress.sent, seconds: progress.seconds, days: [{ day: config.day, date: renderer.date, sent: progress.sent, counts: renderer.counts }] };
}

function logLag(logger: Logger, renderer: DayRenderer, position: number, elapsedMs: number, speed: number, dueMs: (p: number) => number): void {
  const modelSecond = Math.floor((elapsedMs * speed) / 1000);
  const clock = new Date(Math.min(modelSecond, 86_399) * 1000).toISOString().slice(11, 19);
  const lagMs = position < renderer.total ? Math.max(0, elapsedMs - dueMs(position)) : 0;
  logger.info(`live: model time ${clock} local, ${formatCount(position)}/${formatCount(renderer.total)} sent, lag ${(lagMs / 1000).toFixed(1)} s`);
}

export interface SnapshotReport {
  readonly day: number;
  readonly date: string;
  readonly orders: number;
}

/** Sends the order snapshots of days day … day+days-1, one after another, each flushed. */
export async function runSnapshots(config: PlayConfig, logger: Logger): Promise<SnapshotReport[]> {
  const plans = new PlanCache(new World(config.seed, config.size));
  const sink = await openSink(config.output, logger);
  const reports: SnapshotReport[] = [];
  try {
    for (let day = config.day; day < config.day + config.days; day++) {
      const snapshot = buildSnapshot(plans, day);
      const messages = snapshot.lines.map((value, i) => ({ key: snapshot.keys[i] ?? "", value }));
      for (let from = 0; from < messages.length; from += config.output.batchSize) {
        await sink.send(messages.slice(from, from + config.output.batchSize));
      }
      await sink.flush();
      reports.push({ day, date: snapshot.date, orders: messages.length });
      const statuses = Object.entries(snapshot.statuses).map(([k, v]) => `${k} ${v}`).join(", ");
      logger.info(`snapshot ${day} (${snapshot.date}): ${messages.length} orders (${statuses}) → ${sink.description}`);
    }
  } finally {
    await sink.close();
  }
  return reports;
}
