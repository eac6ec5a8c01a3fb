// The world's loader: one TopicLoader per world topic, wired to the stand's Kafka and ClickHouse.
//   hits   (group clickstream_hits)   each message must be a JSON object; its original text goes to
//          stg.hits_in on the node that owns its partition (p mod nodes), with _raw (the text as
//          sent), kafka_topic, kafka_partition and kafka_offset spliced in front. Fields the table
//          does not have are skipped (input_format_skip_unknown_fields = 1: _raw keeps them).
//   orders (group clickstream_orders) each message, whatever its text, is one row of
//          stg.orders_raw_dist (raw, topic, partition, offset, _load_id = ''): the order verdict
//          in SQL names what is wrong with a document, so only invalid UTF-8 and oversized
//          messages become dead letters here.
// Every INSERT is sent with insert_distributed_sync = 1 (the platform layer's name for it), so a
// returned INSERT means the rows are on their shards, ODS included (the hits views write through
// ods.event_dist): that is what a committed offset promises the world's waits (tasks/ingest-wait.ts).
// Dead letters go to stg.dead_letters on the first node, a local table, so they are stored when
// their INSERT returns.
// Every INSERT is also sent with insert_deduplicate = 0 (loaderInsertSettings says why).
import type { ClickHouseClient, ClickHouseSettings } from "@clickhouse/client";
import { Kafka, logLevel, type Admin, type LogEntry } from "kafkajs";
import type { Registry } from "prom-client";
import { createNodeClient, connectClickHouse } from "../clickhouse/client.ts";
import { detectPlatform, type Platform } from "../clickhouse/platform.ts";
import { kafkaBroker, type StandConfig } from "../config/stand.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC, ORDERS_CONSUMER_GROUP, ORDERS_TOPIC } from "../world/constants.ts";
import { ClickHouseRowInserter, type RowInserter } from "./clickhouse-sink.ts";
import { compileLoaderConfig, type LoaderConfig } from "../config/loader.ts";
import { TopicLoader } from "./consumer.ts";
import { ClickHouseDeadLetterSink } from "./dead-letters.ts";
import { CycleLog } from "./cycle-log.ts";
import { LoaderCore, type SpliceRouter } from "./flush-cycle.ts";
import { groupProgress, partitionLag } from "./group-progress.ts";
import { LoaderMetrics } from "./metrics.ts";
import type { PausePoints } from "./pause-points.ts";

export const HITS_LANDING_TABLE = "stg.hits_in";
export const ORDERS_LANDING_TABLE = "stg.orders_raw_dist";
export const DEAD_LETTER_TABLE = "stg.dead_letters";

export interface HostLog {
  info(line: string): void;
  warn(line: string): void;
  error(line: string): void;
}

/**
 * The settings of every loader INSERT. Besides the synchronous Distributed insert and skipping
 * fields the landing does not have, block deduplication is off: a retried batch whose first try
 * stored its rows in stg.hits_raw (a Replicated table) and then failed further down the views (a
 * shard of ods.event_dist away) is the same block again, and a replicated table that drops a
 * duplicate block also skips every view below it. The retry would then "succeed" with nothing in
 * ODS and its offsets would be committed. Seen in the ch1-stopped fault test on 18.16: 1,950 hits
 * lost ("Block with ID … already exists; ignoring it" in the server log). Without deduplication
 * the retry lands again and ODS, a ReplacingMergeTree read FINAL, keeps each hit once.
 */
export function loaderInsertSettings(platform: Platform): ClickHouseSettings {
  return { ...platform.syncDistributedInsertSettings(), input_format_skip_unknown_fields: 1, insert_deduplicate: 0 };
}

/** A target is `node:table`; the inserter sends the table's rows to that node. */
export function target(node: string, table: string): string {
  return `${node}:${table}`;
}

class NodeInserter implements RowInserter {
  constructor(private readonly byNode: ReadonlyMap<string, RowInserter>) {}

  async insertLines(targetName: string, lines: readonly Buffer[]): Promise<void> {
    const colon = targetName.indexOf(":");
    const inserter = this.byNode.get(targetName.slice(0, colon));
    if (colon < 0 || !inserter) throw new Error(`loader target '${targetName}' names no ClickHouse node of the stand`);
    await inserter.insertLines(targetName.slice(colon + 1), lines);
  }
}

/** hits partition p lands on node p mod n. */
export function hitsRouter(nodes: readonly string[]): SpliceRouter {
  const targets = nodes.map((n) => target(n, HITS_LANDING_TABLE));
  return (message, text) => ({
    table: targets[message.partition % targets.length] ?? target(nodes[0] ?? "ch1", HITS_LANDING_TABLE),
    fields: { _raw: text, kafka_topic: message.topic, kafka_partition: message.partition, kafka_offset: message.offset },
  });
}

export function ordersRouter(node: string): SpliceRouter {
  const to = target(node, ORDERS_LANDING_TABLE);
  return (message, text) => ({
    table: to,
    fields: { raw: text, kafka_topic: message.topic, kafka_partition: message.partition, kafka_offset: message.offset, _load_id: "" },
  });
}

function kafkaLogger(log: HostLog) {
  return () => (entry: LogEntry) => {
    const line = `kafkajs ${entry.namespace}: ${entry.log.message}`;
    if (entry.level === logLevel.ERROR) log.error(line);
    else log.warn(line);
  };
}

export interface WorldLoaderOptions {
  config: StandConfig;
  registry: Registry;
  log: HostLog;
  /** Pause points armed over HTTP (loader.fail_points: the test stand only). */
  pausePoints?: PausePoints;
}

/** The two topic loaders of the world, started and stopped together. */
export class WorldLoader {
  private loaders: TopicLoader[] = [];
  private clients: ClickHouseClient[] = [];
  private admin: Admin | undefined;
  private lagTimer: NodeJS.Timeout | undefined;
  readonly metrics: LoaderMetrics;
  readonly loaderConfig: LoaderConfig;

  constructor(private readonly options: WorldLoaderOptions) {
    this.metrics = new LoaderMetrics(options.registry);
    this.loaderConfig = compileLoaderConfig(options.config.loader.options ?? {});
  }

  get running(): boolean {
    return this.loaders.length > 0;
  }

  /** Connects, joins both groups and resolves once each loader has its partitions. */
  async start(): Promise<void> {
    if (this.running) return;
    const { config, log, pausePoints } = this.options;
    const probe = connectClickHouse({ account: "etl", config });
    const platform = await detectPlatform(probe).finally(() => probe.close());
    const settings = loaderInsertSettings(platform);
    const nodes = config.clickhouse.nodes.map((n) => n.name);
    const byNode = new Map<string, RowInserter>();
    for (const node of nodes) {
      const { client } = createNodeClient({ node, account: "etl", config, requestTimeoutMs: 120_000 });
      this.clients.push(client);
      byNode.set(node, new ClickHouseRowInserter(client, settings));
    }
    const firstNode = nodes[0] ?? "ch1";
    const firstClient = this.clients[0];
    if (!firstClient) throw new Error("the stand config lists no ClickHouse node");
    const inserter = new NodeInserter(byNode);
    const deadLetters = new ClickHouseDeadLetterSink(firstClient, DEAD_LETTER_TABLE);
    const kafka = new Kafka({ clientId: "stand-loader", brokers: [kafkaBroker(config)], logLevel: logLevel.WARN, logCreator: kafkaLogger(log) });
    const topics = [
      { topic: HITS_TOPIC.name, groupId: HITS_CONSUMER_GROUP, decodeMode: "json-object" as const, route: hitsRouter(nodes) },
      { topic: ORDERS_TOPIC.name, groupId: ORDERS_CONSUMER_GROUP, decodeMode: "text" as const, route: ordersRouter(firstNode) },
    ];
    this.loaders = topics.map(
      (t) =>
        new TopicLoader({
          kafka,
          topic: t.topic,
          groupId: t.groupId,
          // a member that died (kill -9) holds its partitions until its session times out: keep that short
          consumer: { maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 2000 },
          createCore: (commit) =>
            new LoaderCore({
              config: this.loaderConfig,
              inserter,
              deadLetters,
              commit,
              route: t.route,
              decodeMode: t.decodeMode,
              metrics: this.metrics,
              pause: pausePoints && ((point, detail) => pausePoints.hold(point, t.topic, detail)),
            }),
          onCycle: new CycleLog(t.topic, log).cycle,
        }),
    );
    try {
      for (const loader of this.loaders) await loader.start();
      await Promise.all(this.loaders.map((l) => l.joined()));
      this.admin = kafka.admin();
      await this.admin.connect();
      this.lagTimer = setInterval(() => void this.updateLag().catch((err: unknown) => log.warn(`lag not measured: ${(err as Error).message}`)), 1000);
      log.info(`consuming ${topics.map((t) => `${t.topic} (group ${t.groupId})`).join(" and ")}`);
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** Flushes what was read, commits, leaves the groups, closes every connection. */
  async stop(): Promise<void> {
    this.options.pausePoints?.releaseAll(); // a held cycle must not hold the stop
    if (this.lagTimer !== undefined) clearInterval(this.lagTimer);
    this.lagTimer = undefined;
    const loaders = this.loaders;
    this.loaders = [];
    const results = await Promise.allSettled(loaders.map((l) => l.stop()));
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
    await Promise.allSettled(this.clients.map((c) => c.close()));
    this.clients = [];
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** Consumer lag per partition: the end offset minus the group's committed offset. */
  async updateLag(): Promise<void> {
    const admin = this.admin;
    if (!admin) return;
    for (const [topic, group] of [
      [HITS_TOPIC.name, HITS_CONSUMER_GROUP],
      [ORDERS_TOPIC.name, ORDERS_CONSUMER_GROUP],
    ] as const) {
      const progress = await groupProgress(admin, topic, group);
      for (const [partition, end] of progress.ends) {
        const labels = { topic, partition: String(partition) };
        this.metrics.endOffset.set(labels, end);
        this.metrics.consumerLag.set(labels, partitionLag(progress, partition));
      }
    }
  }

  /** One line per topic: rows buffered and held, sink state, the last cycle error. */
  describe(): string {
    return this.loaders.map((l) => l.describe()).join("; ");
  }
}
