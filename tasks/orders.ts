// orders_ingest: claim the order snapshots the loader has landed in stg.orders_raw under the run's
// load id (sql/etl/orders/10-pull-batch.sql), then parse that load into ods.order and
// ods.order_errors (20-parse-batch.sql). The DAG runs them as two tasks, pull then parse; both are
// safe to retry (a claim adds only what is unclaimed, a parse skips what ODS already has).
//
// Before claiming, the pull waits for the loader's group clickstream_orders to commit the end
// offsets of topic orders as they were when the task began: every snapshot sent before then is
// landed (the loader commits only what it placed). Account: `etl`, INSERT … SELECT only.
import path from "node:path";
import { connectClickHouse, clickhouseNodeConfig, type StandClickHouse, detectPlatform, type Platform, quoteString, readSqlFile, readSqlFragment, runSqlFile, type FileReport } from "../src/clickhouse/index.ts";
import { loadStandConfig, type StandConfig } from "../src/config/index.ts";
import { ensureConsuming, topicEndOffsets, type OffsetsByPartition } from "../src/loader/index.ts";
import { ORDERS_CONSUMER_GROUP, ORDERS_TOPIC, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { ETL_DIR, ETL_REQUEST_TIMEOUT_MS, runTemplateValues } from "./etl-sql.ts";
import { waitForLoaderCommitted } from "./ingest-wait.ts";
import { withKafkaAdmin } from "./kafka-admin.ts";

const ORDERS_DIR = path.join(ETL_DIR, "orders");

export interface OrdersIngestInput extends TaskIo {
  /** The orders_ingest run id: the _load_id of everything this run lands and parses. */
  loadId: string;
  /** Who asks the loader to consume if it does not (dag/run/task). */
  requestedBy?: string;
  /** How long the pull waits for the loader to place the snapshots sent. */
  timeoutMs?: number;
  config?: StandConfig;
}

export interface PullReport {
  loadId: string;
  /** The end offsets of topic orders the claim is bounded by (per partition). */
  ends: Record<string, number>;
  /** Documents in stg.orders_raw under this load id after the pull. */
  landed: number;
  file: FileReport;
}

export interface ParseReport {
  loadId: string;
  landed: number;
  /** ods.order rows carrying this load id (each (order, snapshot) is stored once, by its first load). */
  orders: number;
  /** Error rows of this load per error_class. */
  errors: Record<string, number>;
  file: FileReport;
}

/**
 * An ISO instant field of the document (YYYY-MM-DDTHH:MM:SS.mmmZ, already checked by the verdict)
 * as the server's instant type: whole seconds on 18.16 (no DateTime64), milliseconds where it exists.
 */
export function instantFromIsoField(platform: Platform, field: string): string {
  const text = `visitParamExtractString(raw, ${quoteString(field)})`;
  return platform.hasDateTime64
    ? `parseDateTime64BestEffortOrZero(${text}, 3, 'UTC')`
    : `toDateTimeOrZero(concat(substring(${text}, 1, 10), ' ', substring(${text}, 12, 8)), 'UTC')`;
}

/** kafka_offset below each partition's end: `(p = 0 AND o < 12) OR …`; no partition, nothing to claim. */
export function claimBound(ends: OffsetsByPartition): string {
  const terms = [...ends].sort(([a], [b]) => a - b).map(([p, end]) => `(kafka_partition = ${p} AND kafka_offset < ${end})`);
  return terms.length === 0 ? "0" : `(${terms.join(" OR ")})`;
}

async function orderTemplateValues(platform: Platform, loadId: string, step: string, ends: OffsetsByPartition = new Map()): Promise<Record<string, string>> {
  if (loadId.trim() === "") throw new WorldTaskError(step, "a load id is required (the orders_ingest run id)");
  return {
    "orders.claim_bound": claimBound(ends),
    ...runTemplateValues(platform, { version: 0n, loadId, startedAt: "1970-01-01 00:00:00", dates: [] }),
    "orders.topic": quoteString(ORDERS_TOPIC.name),
    "orders.verdict": await readSqlFragment(path.join(ORDERS_DIR, "order-verdict.fragment.sql"), step),
    "orders.created_at": instantFromIsoField(platform, "created_at"),
    "orders.updated_at": instantFromIsoField(platform, "updated_at"),
  };
}

async function withFirstNodeEtl<T>(config: StandConfig | undefined, work: (clickhouse: StandClickHouse, platform: Platform) => Promise<T>): Promise<T> {
  const standConfig = config ?? loadStandConfig();
  const node = clickhouseNodeConfig(undefined, standConfig);
  const clickhouse = connectClickHouse({ node: node.name, account: "etl", config: standConfig, requestTimeoutMs: ETL_REQUEST_TIMEOUT_MS });
  try {
    return await work(clickhouse, await detectPlatform(clickhouse));
  } finally {
    await clickhouse.close();
  }
}

async function countLanded(clickhouse: StandClickHouse, loadId: string): Promise<number> {
  const rows = await clickhouse.query<{ n: string }>(`SELECT count() AS n FROM stg.orders_raw_dist WHERE _load_id = ${quoteString(loadId)}`);
  return Number(rows[0]?.n ?? 0);
}

/** Step 1: wait until the loader placed every snapshot sent so far, then claim them under the load id. */
export async function pullOrdersBatch(input: OrdersIngestInput): Promise<PullReport> {
  const step = "pullOrdersBatch";
  await ensureConsuming({ ...input, requestedBy: input.requestedBy ?? `orders_ingest/${input.loadId}` });
  const ends = await withKafkaAdmin({ config: input.config }, "world-orders-ends", (admin) => topicEndOffsets(admin, ORDERS_TOPIC.name));
  const placed = await waitForLoaderCommitted({ ...input, topic: ORDERS_TOPIC.name, group: ORDERS_CONSUMER_GROUP, ends, timeoutMs: input.timeoutMs ?? 300_000 });
  input.log(`the loader placed all ${placed.total} messages of topic ${ORDERS_TOPIC.name} after ${placed.seconds.toFixed(1)} s`);
  return withFirstNodeEtl(input.config, async (clickhouse, platform) => {
    const file = await readSqlFile(path.join(ORDERS_DIR, "10-pull-batch.sql"), step);
    const values = await orderTemplateValues(platform, input.loadId, step, ends);
    // the claimed rows must reach their shards before parse reads them
    const report = await runSqlFile({
      step, clickhouse, file, values, settings: platform.syncDistributedInsertSettings(), signal: input.signal, log: input.log,
    });
    const landed = await countLanded(clickhouse, input.loadId);
    input.log(`claimed: ${landed} order documents under load ${input.loadId} (offsets below ${claimBound(ends)})`);
    return { loadId: input.loadId, ends: Object.fromEntries([...ends].map(([p, o]) => [String(p), o])), landed, file: report };
  });
}

/** Step 2: the load's documents into ods.order (valid) and ods.order_errors (the rest). Rerunnable. */
export async function parseOrdersBatch(input: OrdersIngestInput): Promise<ParseReport> {
  const step = "parseOrdersBatch";
  return withFirstNodeEtl(input.config, async (clickhouse, platform) => {
    const file = await readSqlFile(path.join(ORDERS_DIR, "20-parse-batch.sql"), step);
    const values = await orderTemplateValues(platform, input.loadId, step);
    const report = await runSqlFile({
      step, clickhouse, file, values, settings: platform.syncDistributedInsertSettings(), signal: input.signal, log: input.log,
    });
    const load = quoteString(input.loadId);
    const [landed, orderRows, errorRows] = await Promise.all([
      countLanded(clickhouse, input.loadId),
      clickhouse.query<{ n: string }>(`SELECT count() AS n FROM ods.order_dist WHERE _load_id = ${load}`),
      clickhouse.query<{ error_class: string; n: string }>(
        `SELECT toString(error_class) AS error_class, count() AS n FROM ods.order_errors_dist WHERE _load_id = ${load} GROUP BY error_class ORDER BY error_class`,
      ),
    ]);
    const errors = Object.fromEntries(errorRows.map((r) => [r.error_class, Number(r.n)]));
    const orders = Number(orderRows[0]?.n ?? 0);
    input.log(`parsed load ${input.loadId}: ${landed} landed, ${orders} order rows, errors ${JSON.stringify(errors)}`);
    return { loadId: input.loadId, landed, orders, errors, file: report };
  });
}
