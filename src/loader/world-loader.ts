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
// The landing tables are options (loader.options.routes, defaults above) and a hot reload of the
// options reaches both topic loaders and their routers (reconfigure; docs/loader.md "Hot reload").
import type { ClickHouseClient, ClickHouseSettings } from "@clickhouse/client";
import { type Admin, Kafka, type LogEntry, logLevel } from "kafkajs";
import type { Registry } from "prom-client";
import { createNodeClient, connectClickHouse, detectPlatform, type Platform } from "../clickhouse/index.ts";
import { kafkaBroker, type StandConfig, compileLoaderConfig, type LoaderConfig } from "../config/index.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC, ORDERS_CONSUMER_GROUP, ORDERS_TOPIC } from "../world/index.ts";
import { ClickHouseRowInserter, type RowInserter } from "./clickhouse-sink.ts";
import { TopicLoader, type TopicLoaderOptions } from "./consumer.ts";
import { ClickHouseDeadLetterSink, type DeadLetterSink } from "./dead-letters.ts";
import type { DecodeMode } from "./decode.ts";
import { CycleLog } from "./cycle-log.ts";
import { LoaderCore, type SpliceRouter } from "./loader-core.ts";
import { countSkippedHeaders, hitsRouter, OptionsInForce, ordersRouter } from "./routes.ts";
import { groupProgress, partitionLag } from "./group-progress.ts";
import { LoaderMetrics } from "./metrics.ts";
import { SuspectTurns } from "./node-deaths.ts";
import type { PausePoints } from "./pause-points.ts";
import { targetName, type LoaderTarget } from "./types.ts";
import { checkTargets, describePlan, type ColumnRow } from "./table-schema.ts";
import { errorMessage } from "../errors.ts";

export { HITS_LANDING_TABLE, ORDERS_LANDING_TABLE, hitsRouter, ordersRouter } from "./routes.ts";
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

/**
 * Sends each batch to the node its target names, through that node's inserter. A target names no
 * node of the stand only through a programming error.
 */
export class NodeInserter implements RowInserter {
  readonly skipsUnknownFields: boolean;

  constructor(private readonly byNode: ReadonlyMap<string, RowInserter>) {
    this.skipsUnknownFields = [...byNode.values()].every((i) => i.skipsUnknownFields === true);
  }

  async insertLines(target: LoaderTarget, lines: readonly Buffer[]): Promise<void> {
    const inserter = this.byNode.get(target.node);
    if (!inserter) throw new Error(`loader target ${targetName(target)} names no ClickHouse node of the stand`);
    await inserter.insertLines(target, lines);
  }

  async insertRowBinary(target: LoaderTarget, columnList: string, rows: readonly Buffer[]): Promise<void> {
    const inserter = this.of(target);
    if (inserter.insertRowBinary === undefined) throw new Error(`loader target ${targetName(target)}: its node's inserter sends no RowBinary`);
    await inserter.insertRowBinary(target, columnList, rows);
  }

  async readColumns(target: LoaderTarget): Promise<ColumnRow[]> {
    const inserter = this.of(target);
    if (inserter.readColumns === undefined) throw new Error(`loader target ${targetName(target)}: its node's inserter reads no columns`);
    return inserter.readColumns(target);
  }

  private of(target: LoaderTarget): RowInserter {
    const inserter = this.byNode.get(target.node);
    if (!inserter) throw new Error(`loader target ${targetName(target)} names no ClickHouse node of the stand`);
    return inserter;
  }

  async nodeAnswers(target: LoaderTarget, timeoutMs: number): Promise<boolean> {
    const inserter = this.byNode.get(target.node);
    return inserter?.nodeAnswers === undefined ? true : inserter.nodeAnswers(target, timeoutMs);
  }
}

/** What the world's loader passes kafkajs: a member that died (kill -9) holds its partitions until
 * its session times out, so that is kept short. */
export const LOADER_CONSUMER_SETTINGS = { maxWaitTimeInMs: 100, sessionTimeout: 10_000, heartbeatInterval: 2000 } as const;

/** Everything one topic's loader is made of; the world's loader, the benches and the tests build
 * theirs with createTopicLoader, so they run the loader the service runs. */
export interface TopicLoaderWiring {
  kafka: Kafka;
  topic: string;
  groupId: string;
  decodeMode: DecodeMode;
  route: SpliceRouter;
  inserter: RowInserter;
  deadLetters: DeadLetterSink;
  config: LoaderConfig;
  metrics?: LoaderMetrics;
  /** The per-node suspect turn shared with the process's other topic loaders (LoaderCoreDeps). */
  suspectTurns?: SuspectTurns;
  pausePoints?: PausePoints;
  onCycle?: TopicLoaderOptions["onCycle"];
  /** The consumer loop's timer and bounded stop (TopicLoaderOptions); defaults there. */
  tickMs?: number;
  drainTimeoutMs?: number;
}

export function createTopicLoader(w: TopicLoaderWiring): TopicLoader {
  const { pausePoints, topic } = w;
  return new TopicLoader({
    kafka: w.kafka,
    topic,
    groupId: w.groupId,
    consumer: LOADER_CONSUMER_SETTINGS,
    tickMs: w.tickMs,
    drainTimeoutMs: w.drainTimeoutMs,
    createCore: (commit) =>
      new LoaderCore({
        config: w.config,
        inserter: w.inserter,
        deadLetters: w.deadLetters,
        commit,
        route: w.route,
        decodeMode: w.decodeMode,
        metrics: w.metrics,
        suspectTurns: w.suspectTurns,
        pause: pausePoints && ((point, detail) => pausePoints.hold(point, topic, detail)),
      }),
    onCycle: w.onCycle,
  });
}

/** One ClickHouse client per node of the stand, as `account`, and the inserter that routes by node. */
export function nodeInserters(config: StandConfig, account: "etl" | "admin", settings: ClickHouseSettings): { inserter: NodeInserter; clients: ClickHouseClient[]; first: ClickHouseClient } {
  const clients: ClickHouseClient[] = [];
  const byNode = new Map<string, RowInserter>();
  for (const { name } of config.clickhouse.nodes) {
    const { client } = createNodeClient({ node: name, account, config, requestTimeoutMs: 120_000 });
    clients.push(client);
    byNode.set(name, new ClickHouseRowInserter(client, settings));
  }
  const first = clients[0];
  if (!first) throw new Error("the stand config lists no ClickHouse node");
  return { inserter: new NodeInserter(byNode), clients, first };
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
  /** Kafka client id, which kafka-consumer-groups.sh --describe shows per member: stand-loader, stand-loader-2, … */
  clientId?: string;
}

/** The two topic loaders of the world, started and stopped together. */
export class WorldLoader {
  private loaders: TopicLoader[] = [];
  private clients: ClickHouseClient[] = [];
  private admin: Admin | undefined;
  private lagTimer: NodeJS.Timeout | undefined;
  /** Both topics write to the first node: one suspect batch in flight to a node for the whole
   * process, and for the life of the process (a core left running by a stop that timed out
   * still takes its turn before the next start's cores). */
  private readonly suspectTurns = new SuspectTurns();
  readonly metrics: LoaderMetrics;
  /** The options in force: the stand config's at first, a hot reload's after reconfigure; the routers read them at every message. */
  private readonly inForce: OptionsInForce;

  constructor(private readonly options: WorldLoaderOptions) {
    this.metrics = new LoaderMetrics(options.registry);
    this.inForce = new OptionsInForce(compileLoaderConfig(options.config.loader.options ?? {}));
  }

  get loaderConfig(): LoaderConfig {
    return this.inForce.current;
  }

  /**
   * Puts reloaded options in force: flush limits, size and shape limits and capture modes in each
   * core at once (LoaderCore.reconfigure), routes and declared headers for the messages read from now
   * on (rows already buffered flush where they were routed), everything at the next start when not
   * consuming. Backoff and kills-server options wait for the next start (reload.ts AT_NEXT_START).
   */
  reconfigure(next: LoaderConfig): void {
    this.inForce.set(next);
    for (const loader of this.loaders) loader.reconfigure(next);
    this.warnHeaderClashes();
  }

  private warnHeaderClashes(): void {
    for (const c of this.inForce.clashes()) {
      this.options.log.warn(`loader.options.tables["${c.table}"].headers: header ${c.header} names column ${c.column}, which the router writes itself; the header is not promoted (name another column)`);
    }
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
    const nodes = config.clickhouse.nodes.map((n) => n.name);
    const { inserter, clients, first } = nodeInserters(config, "etl", loaderInsertSettings(platform));
    this.clients = clients;
    const deadLetters = new ClickHouseDeadLetterSink(first, DEAD_LETTER_TABLE);
    const kafka = new Kafka({ clientId: this.options.clientId ?? "stand-loader", brokers: [kafkaBroker(config)], logLevel: logLevel.WARN, logCreator: kafkaLogger(log) });
    const topics = [
      { topic: HITS_TOPIC.name, groupId: HITS_CONSUMER_GROUP, decodeMode: "json-object" as const, route: hitsRouter(nodes, this.inForce.landing("hits"), countSkippedHeaders(this.metrics)) },
      { topic: ORDERS_TOPIC.name, groupId: ORDERS_CONSUMER_GROUP, decodeMode: "text" as const, route: ordersRouter(nodes[0] ?? "ch1", this.inForce.landing("orders"), countSkippedHeaders(this.metrics)) },
    ];
    this.warnHeaderClashes();
    // each landing's capture mode and insert plan, from its columns: a mode this server cannot run refuses the start
    const landings = [
      ...nodes.map((node) => ({ target: { node, table: this.inForce.landing("hits")().table }, decodeMode: "json-object" as const })),
      { target: { node: nodes[0] ?? "ch1", table: this.inForce.landing("orders")().table }, decodeMode: "text" as const },
    ];
    try {
      const plans = await checkTargets((target) => inserter.readColumns(target), landings, this.inForce.current, inserter.skipsUnknownFields);
      plans.forEach((plan, k) => log.info(`insert plan on ${landings[k]?.target.node ?? "?"}: ${describePlan(plan)}${plan.notes.length > 0 ? `; ${plan.notes.join("; ")}` : ""}`));
    } catch (err) {
      await Promise.allSettled(clients.map((c) => c.close()));
      this.clients = [];
      throw err;
    }
    this.loaders = topics.map((t) =>
      createTopicLoader({
        kafka,
        ...t,
        inserter,
        deadLetters,
        config: this.loaderConfig,
        metrics: this.metrics,
        suspectTurns: this.suspectTurns,
        pausePoints,
        onCycle: new CycleLog(t.topic, log, Date.now, this.loaderConfig.killsServer.suspectAfter).cycle,
      }),
    );
    try {
      for (const loader of this.loaders) await loader.start();
      await Promise.all(this.loaders.map((l) => l.joined()));
      this.admin = kafka.admin();
      await this.admin.connect();
      this.lagTimer = setInterval(() => void this.updateLag().catch((err: unknown) => log.warn(`lag not measured: ${errorMessage(err)}`)), 1000);
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

  /**
   * Why this loader is degraded, one line each (none: it is not): a topic whose sink is down, and
   * every table whose rows have been held longer than `heldAfterMs`, with the reason, the server's
   * code and the start of its error text (which names the node).
   */
  problems(now: number, heldAfterMs: number): string[] {
    return this.loaders.flatMap((l) => {
      const s = l.status();
      const held = s.heldTables
        .filter((t) => s.sinkDown || now - t.since >= heldAfterMs)
        .map((t) => {
          const code = t.heldBy.code === undefined ? "" : ` (code ${t.heldBy.code})`;
          return `${s.topic}: rows of ${t.table} held ${((now - t.since) / 1000).toFixed(0)} s, ${t.holds} tries, by ${t.heldBy.reason}${code}: ${t.heldBy.text.slice(0, 200)}`;
        });
      return [...(s.sinkDown ? [`${s.topic}: sink DOWN (every insert of the last cycles failed; ${s.heldRows} rows held, none lost)`] : []), ...held];
    });
  }

  /** The first topic whose fetch loop has been silent for `stallMs` or more (TopicLoader.fetchSilenceMs), with how long. */
  fetchStall(now: number, stallMs: number): { topic: string; silentMs: number } | undefined {
    for (const loader of this.loaders) {
      const silentMs = loader.fetchSilenceMs(now);
      if (silentMs >= stallMs) return { topic: loader.status().topic, silentMs };
    }
    return undefined;
  }

  /** One line per topic: rows buffered and held, sink state, the last cycle error. */
  describe(): string {
    return this.loaders.map((l) => l.describe()).join("; ");
  }
}
