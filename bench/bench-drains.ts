// One drain of a bench topic that already holds its hits, by either path, timed from the moment it
// may start consuming until its consumer group has committed the topic's end (and, through a chain,
// until its ODS holds every row), with the CPU this process (the in-process loader, or only the
// pollers for the Kafka engine) and the ClickHouse servers spent meanwhile:
//   the loader        a TopicLoader + LoaderCore in this process, wired as the world's loader is
//                     (src/loader/host.ts: its hits router, p → node p mod n, insert_distributed_sync,
//                     skip unknown fields, the stand's loader options), whose targets are moved from
//                     stg.hits_in to the bench landing
//   the Kafka engine  a reader per node, created (new group, so from offset 0) under the name its
//                     views were made over (bench-clickhouse.ts prepareKafkaEngine): consumption
//                     starts with every view in place
import { Kafka, logLevel } from "kafkajs";
import { Registry } from "prom-client";
import { quoteIdentifier } from "../src/clickhouse/index.ts";
import { compileLoaderConfig, kafkaBroker, loadStandConfig, type LoaderConfigInput } from "../src/config/index.ts";
import { ClickHouseDeadLetterSink, createTopicLoader, hitsRouter, LOADER_CONSUMER_SETTINGS, loaderInsertSettings, nodeInserters, LoaderMetrics } from "../src/loader/index.ts";
import { benchClickHouse, benchName, benchPlatform, clickhouseCpuMicros, clickhousePids, startKafkaEngine, type KafkaEngineChain } from "./bench-clickhouse.ts";
import { waitForDrain, withAdmin, type Drain } from "./bench-kafka.ts";

export interface DrainResult {
  drain: Drain;
  /** Seconds from the start until the chain's ODS held every row (chain runs only). */
  odsSeconds: number | undefined;
  /** CPU µs of this process during the drain: the loader itself, or only the pollers. */
  processCpuMicros: number;
  /** CPU µs of the ClickHouse servers during the drain. */
  clickhouseCpuMicros: number;
}

export interface LoaderDrainInput {
  topic: string;
  groupId: string;
  /** The bench landing, `db.table` (unquoted): what stg.hits_in becomes. */
  landing: string;
  /** The bench dead-letter table on the first node, `db.table` (unquoted). */
  deadLetters: string;
  /** The bench ODS database the landing's views fill, if any: the drain also waits for it. */
  ods?: string;
  /** Loaders in the group (each its own Kafka client and connections; Kafka splits the partitions). Default 1. */
  members?: number;
  /** Loader options over the stand's (insert format, capture mode). */
  options?: Partial<LoaderConfigInput>;
}

function qualified(name: string): string {
  return name.split(".").map(quoteIdentifier).join(".");
}

/** Drains the topic with in-process loaders (one, or a group of `members`); returns once the group committed the end, after stopping them. */
export async function drainWithLoader(input: LoaderDrainInput): Promise<DrainResult> {
  const config = loadStandConfig();
  const platform = await benchPlatform();
  // admin, not etl as in the world: etl may write only the world's databases
  const { inserter, clients, first } = nodeInserters(config, "admin", loaderInsertSettings(platform));
  const nodes = config.clickhouse.nodes.map((n) => n.name);
  const loaders = Array.from({ length: input.members ?? 1 }, (_, k) =>
    createTopicLoader({
      kafka: new Kafka({ clientId: `loader-bench-${k + 1}`, brokers: [kafkaBroker(config)], logLevel: logLevel.NOTHING }),
      topic: input.topic,
      groupId: input.groupId,
      decodeMode: "json-object",
      route: hitsRouter(nodes, qualified(input.landing)),
      inserter,
      deadLetters: new ClickHouseDeadLetterSink(first, qualified(input.deadLetters)),
      config: compileLoaderConfig({ ...(config.loader.options ?? {}), ...input.options }),
      metrics: new LoaderMetrics(new Registry()),
    }),
  );
  try {
    return await measureDrain(async () => void (await Promise.all(loaders.map((l) => l.start()))), input.groupId, input.topic, input.ods);
  } finally {
    await Promise.allSettled(loaders.map((l) => l.stop()));
    await Promise.allSettled(clients.map((c) => c.close()));
  }
}

/** Drains the topic with a Kafka-engine reader per node over a prepared chain (prepareKafkaEngine); returns once the group committed the end (and `ods` holds every row). */
export async function drainWithKafkaEngine(chain: KafkaEngineChain, ods?: string): Promise<DrainResult> {
  return measureDrain(() => startKafkaEngine(chain), chain.target.group, chain.target.topic, ods);
}

/**
 * A reference, not a baseline: kafkajs alone with the loader's consumer settings, every message
 * resolved and nothing else done (auto-commit after each batch), to show what the loader's Kafka
 * client costs before the loader does any work.
 */
export async function drainWithKafkajsOnly(topic: string, groupId: string): Promise<DrainResult> {
  const kafka = new Kafka({ clientId: "loader-bench-kafkajs", brokers: [kafkaBroker(loadStandConfig())], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId, ...LOADER_CONSUMER_SETTINGS, allowAutoTopicCreation: false });
  const start = async (): Promise<void> => {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      eachBatch: async (payload) => {
        for (const message of payload.batch.messages) payload.resolveOffset(message.offset);
        await payload.commitOffsetsIfNecessary();
      },
    });
  };
  try {
    return await measureDrain(start, groupId, topic, undefined);
  } finally {
    await consumer.disconnect();
  }
}

/**
 * Starts consuming, waits until the group committed the topic's end and, with `ods`, until that
 * bench database's event_dist + event_errors_dist hold as many rows (an asynchronous Distributed
 * insert lands after the commit): the CPU window covers both.
 */
async function measureDrain(start: () => Promise<void>, groupId: string, topic: string, ods: string | undefined): Promise<DrainResult> {
  const pids = clickhousePids();
  return withAdmin(async (admin) => {
    // each path's ClickHouse CPU is its own: the merges the path before it left are waited out
    // first, and the merges its own inserts started are waited out (and counted) after it
    await waitForNoMerges();
    const chBefore = clickhouseCpuMicros(pids);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await start();
    const drain = await waitForDrain(admin, groupId, topic, started);
    const odsSeconds = ods === undefined ? undefined : await waitForOdsRows(ods, drain.total, started);
    const cpu = process.cpuUsage(cpuBefore);
    await waitForNoMerges();
    return { drain, odsSeconds, processCpuMicros: cpu.user + cpu.system, clickhouseCpuMicros: clickhouseCpuMicros(pids) - chBefore };
  });
}

/** Waits (at most 60 s, saying so) until no node of the test stand runs a merge. */
async function waitForNoMerges(): Promise<void> {
  const nodes = loadStandConfig().clickhouse.nodes.map((n) => n.name);
  const started = performance.now();
  for (;;) {
    let merging = 0;
    for (const node of nodes) {
      const ch = benchClickHouse(node);
      try {
        const [row] = await ch.query<{ n: string }>("SELECT count() AS n FROM system.merges");
        merging += Number(row?.n ?? 0);
      } finally {
        await ch.close();
      }
    }
    if (merging === 0) return;
    if (performance.now() - started > 60_000) {
      console.log(`  ${merging} merges still running after 60 s; measuring anyway`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Seconds from `startedAt` until the bench ODS holds `expected` rows, polled every 100 ms. */
async function waitForOdsRows(ods: string, expected: number, startedAt: number): Promise<number> {
  const ch = benchClickHouse();
  const sql = `SELECT (SELECT count() FROM ${benchName(ods)}.event_dist) + (SELECT count() FROM ${ods}.event_errors_dist) AS n`;
  let lastLog = performance.now();
  try {
    for (;;) {
      const [row] = await ch.query<{ n: string }>(sql);
      const seen = Number(row?.n ?? 0);
      const at = performance.now() - startedAt;
      if (seen >= expected) return at / 1000;
      if (at > 600_000) throw new Error(`${ods}: event_dist + event_errors_dist hold ${seen} of ${expected} rows after ${Math.round(at / 1000)} s`);
      if (performance.now() - lastLog >= 5000) {
        lastLog = performance.now();
        console.log(`  waiting for ${ods} to hold every row: ${seen} of ${expected}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await ch.close();
  }
}
