// Generator throughput on this machine for the 8 starting days: hits generated per second (plan +
// render, no output), hits sent per second by the kafkajs sink alone (hits rendered beforehand),
// and hits produced into Kafka per second end to end (what `batch` does). Run with
//   node --import tsx bench/generator-bench.ts [--reps N] [--batch-bytes N] [--in-flight N]
// against the local broker of stand.yaml (make stand-up). A scratch topic with 2 partitions is
// created and deleted. Each figure is the best of N runs after one warm-up, plus the cold first run
// (a real `batch` process is always cold). The machine is shared: the table states the load.
import { randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { Kafka, logLevel } from "kafkajs";
import { loadStandConfig } from "../src/config/index.ts";
import { DayRenderer, MAX_HIT_BYTES, World, DEFAULT_BATCH_BYTES, DEFAULT_BATCH_SIZE, DEFAULT_IN_FLIGHT, generateChunks, type FrameChunk, silentLogger, runBatch, KafkaSink, DEFAULT_SEED, WORLD_STARTING_DAYS } from "../generator/src/index.ts";

function numberArg(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}
const REPS = numberArg("--reps", 3);
const BATCH_BYTES = numberArg("--batch-bytes", DEFAULT_BATCH_BYTES);
const IN_FLIGHT = numberArg("--in-flight", DEFAULT_IN_FLIGHT);

interface Row {
  readonly what: string;
  readonly events: number;
  readonly coldPerSecond: number;
  readonly bestPerSecond: number;
  /** CPU time of this process (all its threads) per hit in the best run: what a busy machine does not distort. */
  readonly cpuMicrosPerHit: number;
}

/** Runs `once` 1 + REPS times; returns the first (cold) and the best of the rest. */
async function measure(what: string, once: () => Promise<number> | number): Promise<Row> {
  const runs: { rate: number; cpu: number }[] = [];
  let events = 0;
  for (let rep = 0; rep <= REPS; rep++) {
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    events = await once();
    const cpu = process.cpuUsage(cpuBefore);
    runs.push({ rate: events / ((performance.now() - started) / 1000), cpu: (cpu.user + cpu.system) / events });
  }
  const best = runs.slice(1).reduce((a, b) => (b.rate > a.rate ? b : a));
  return { what, events, coldPerSecond: runs[0]?.rate ?? 0, bestPerSecond: best.rate, cpuMicrosPerHit: best.cpu };
}

/** Plans and renders the starting days into bytes, as the batch worker does, and sends nothing. */
function generateOnly(): number {
  // A fresh World each run: no cohort memo carried over, as in a real batch process.
  const world = new World(DEFAULT_SEED);
  const buf = Buffer.allocUnsafe(MAX_HIT_BYTES);
  let events = 0;
  for (let day = 0; day < WORLD_STARTING_DAYS; day++) {
    const renderer = new DayRenderer(world, day);
    for (let p = 0; p < renderer.total; p++) {
      renderer.key(p);
      if (renderer.write(p, buf, 0) > 0) events += 1;
    }
  }
  return events;
}

/** What `batch` does: plan, render and send the starting days through the kafkajs sink. */
async function produce(brokers: string[], topic: string): Promise<number> {
  const report = await runBatch({
    seed: DEFAULT_SEED, size: "canonical", day: 0, days: WORLD_STARTING_DAYS, limit: Number.POSITIVE_INFINITY,
    output: { kind: "kafka", brokers, topic, batchSize: DEFAULT_BATCH_SIZE, batchBytes: BATCH_BYTES, inFlight: IN_FLIGHT },
  }, silentLogger);
  return report.sent;
}

/** The starting days rendered into frame chunks once, outside any timing. */
function renderedChunks(): FrameChunk[] {
  const chunks: FrameChunk[] = [];
  const job = { seed: DEFAULT_SEED, day: 0, days: WORLD_STARTING_DAYS, limit: Number.POSITIVE_INFINITY, chunkBytes: BATCH_BYTES };
  for (const event of generateChunks(job)) if (event.type === "chunk") chunks.push(event.chunk);
  return chunks;
}

/** The kafkajs sink alone: already rendered hits (the same chunks every run) sent and acked. */
async function sendOnly(brokers: string[], topic: string, chunks: readonly FrameChunk[]): Promise<number> {
  const sink = await KafkaSink.connect({ brokers, topic, inFlight: IN_FLIGHT, batchBytes: BATCH_BYTES, logger: silentLogger });
  let sent = 0;
  try {
    for (const chunk of chunks) {
      await sink.sendFrames(chunk);
      sent += chunk.count;
    }
    await sink.flush();
  } finally {
    await sink.close();
  }
  return sent;
}

async function withScratchTopic<T>(brokers: string[], body: (topic: string) => Promise<T>): Promise<T> {
  const kafka = new Kafka({ clientId: "generator-bench", brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topic = `bench-generator-${randomBytes(4).toString("hex")}`;
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
    return await body(topic);
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}

function printTable(rows: readonly Row[]): void {
  const fmt = (n: number): string => Math.round(n).toLocaleString("en-US");
  const header = ["what", "hits", "cold hits/s", `best of ${REPS} hits/s`, "CPU µs/hit"];
  const body = rows.map((r) => [r.what, fmt(r.events), fmt(r.coldPerSecond), fmt(r.bestPerSecond), r.cpuMicrosPerHit.toFixed(1)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const b of body) console.log(line(b));
}

const config = loadStandConfig();
const brokers = [`${config.bind_host}:${config.kafka.port}`];
const rows: Row[] = [await measure("generate only (plan + render, 8 days)", generateOnly)];
await withScratchTopic(brokers, async (topic) => {
  const chunks = renderedChunks();
  rows.push(await measure("kafkajs send only (hits rendered beforehand)", () => sendOnly(brokers, topic, chunks)));
  rows.push(await measure("batch 8 days → Kafka (kafkajs), end to end", () => produce(brokers, topic)));
});
const load = loadavg().map((l) => l.toFixed(2)).join(" ");
console.log(`node ${process.version}, ${cpus().length} CPUs, load average ${load}; Kafka ${brokers[0]}, 2 partitions, ` +
  `kafkajs sendBatch of ${BATCH_BYTES} B per partition, ${IN_FLIGHT} in flight, acks=1, no compression. Rates are wall-clock; sends count until acked.`);
printTable(rows);
