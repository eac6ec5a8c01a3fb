// A micro-benchmark of the loader's per-message CPU: LoaderCore.accept (size and UTF-8 checks,
// JSON check, routing, splicing the line, buffering, offset tracking) plus the flush cycles that
// build each INSERT body, against an inserter that keeps the body and sends nothing. Kafka
// fetching and the HTTP send are not in it. For bench/ and for comparing decode modes.
import { Registry } from "prom-client";
import { jsonEachRowChunks, type RowInserter, type DecodeMode, LoaderCore, LoaderMetrics, type SpliceRouter } from "../src/loader/index.ts";
import { compileLoaderConfig, type LoaderConfigInput } from "../src/config/index.ts";

export interface ThroughputOptions {
  /** Message values, used in turn (e.g. a few thousand rendered hits). */
  samples: readonly Buffer[];
  /** Messages in the measured run (a warm-up of a fifth of that, at least 20,000, runs first). */
  messages?: number;
  decodeMode?: DecodeMode;
  /** Defaults to the world's hits route: `_raw`, kafka_topic, kafka_partition, kafka_offset. */
  route?: SpliceRouter;
  config?: LoaderConfigInput;
}

export interface ThroughputReport {
  messages: number;
  /** Process CPU (user + system) per message, in microseconds. */
  cpuMicrosPerMessage: number;
  wallMicrosPerMessage: number;
  /** Wall-clock rate of this one-core loop. */
  messagesPerSecond: number;
  /** Mean value size and mean JSONEachRow line size, in bytes. */
  valueBytesPerMessage: number;
  lineBytesPerMessage: number;
  rowsLanded: number;
  deadLetters: number;
}

/** The world's hits route, as the benchmark's default. */
export const benchmarkHitsRoute: SpliceRouter = (message, text) => ({
  target: { node: "bench", table: "stg.hits_in" },
  fields: { _raw: text, kafka_topic: message.topic, kafka_partition: message.partition, kafka_offset: message.offset },
});

interface RunTotals {
  rowsLanded: number;
  deadLetters: number;
  valueBytes: number;
  bodyBytes: number;
}

async function runMessages(options: ThroughputOptions, count: number): Promise<RunTotals> {
  const totals: RunTotals = { rowsLanded: 0, deadLetters: 0, valueBytes: 0, bodyBytes: 0 };
  const inserter: RowInserter = {
    insertLines: (_table, lines) => {
      for (const chunk of jsonEachRowChunks(lines)) totals.bodyBytes += chunk.length;
      return Promise.resolve();
    },
  };
  const config = compileLoaderConfig(options.config ?? {});
  const core = new LoaderCore({
    config,
    inserter,
    deadLetters: { write: () => Promise.resolve() },
    commit: () => Promise.resolve(),
    decodeMode: options.decodeMode ?? "json-object",
    route: options.route ?? benchmarkHitsRoute,
    metrics: new LoaderMetrics(new Registry()),
  });
  const { samples } = options;
  for (let i = 0; i < count; i++) {
    const value = samples[i % samples.length] ?? null;
    totals.valueBytes += value?.length ?? 0;
    core.accept({ topic: "hits", partition: 0, offset: BigInt(i), key: null, value });
    if ((i + 1) % config.flush.maxRows === 0) await collect(core.runCycle({ all: true }), totals);
  }
  await collect(core.runCycle({ all: true }), totals);
  return totals;
}

async function collect(cycle: ReturnType<LoaderCore["runCycle"]>, totals: RunTotals): Promise<void> {
  const report = await cycle;
  totals.rowsLanded += report.rowsLanded;
  totals.deadLetters += report.deadLettersWritten;
}

/** Measures accept() plus INSERT-body building per message over `samples`, after a warm-up. */
export async function measureLoaderThroughput(options: ThroughputOptions): Promise<ThroughputReport> {
  if (options.samples.length === 0) throw new Error("measureLoaderThroughput needs at least one sample value");
  const messages = options.messages ?? 200_000;
  await runMessages(options, Math.max(20_000, Math.floor(messages / 5)));
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const totals = await runMessages(options, messages);
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    messages,
    cpuMicrosPerMessage: (cpu.user + cpu.system) / messages,
    wallMicrosPerMessage: (wallMs * 1000) / messages,
    messagesPerSecond: messages / (wallMs / 1000),
    valueBytesPerMessage: totals.valueBytes / messages,
    lineBytesPerMessage: totals.rowsLanded === 0 ? 0 : totals.bodyBytes / totals.rowsLanded,
    rowsLanded: totals.rowsLanded,
    deadLetters: totals.deadLetters,
  };
}
