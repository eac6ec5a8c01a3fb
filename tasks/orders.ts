// orders_ingest: pull one batch of order snapshots from the orders reader into stg.orders_raw under
// the run's load id (sql/etl/orders/10-pull-batch.sql), then parse that load into ods.order and
// ods.order_errors (20-parse-batch.sql). The DAG runs them as two tasks, pull then parse, so a
// failed parse is retried on the landed rows without touching Kafka again.
//
// Account: `etl` for both: INSERT … SELECT and a direct SELECT from the Kafka table, no DDL.
// Node: the first node, the only one with stg.orders_raw_kafka (sql/ddl/10-stg-tables.sql).
import path from "node:path";
import { connectClickHouse, clickhouseNodeConfig, type StandClickHouse } from "../src/clickhouse/client.ts";
import { detectPlatform, type Platform } from "../src/clickhouse/platform.ts";
import { quoteString } from "../src/clickhouse/sql.ts";
import { loadStandConfig, type StandConfig } from "../src/config/stand.ts";
import { ORDERS_TOPIC } from "../src/world/constants.ts";
import { WorldTaskError, type TaskIo } from "../src/world/io.ts";
import { readSqlFile, readSqlFragment, runSqlFile, type FileReport } from "../src/clickhouse/sql-files.ts";
import { ETL_DIR, ETL_REQUEST_TIMEOUT_MS, runTemplateValues } from "./etl-sql.ts";

const ORDERS_DIR = path.join(ETL_DIR, "orders");

export interface OrdersIngestInput extends TaskIo {
  /** The orders_ingest run id: the _load_id of everything this run lands and parses. */
  loadId: string;
  config?: StandConfig;
}

export interface PullReport {
  loadId: string;
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

async function orderTemplateValues(platform: Platform, loadId: string, step: string): Promise<Record<string, string>> {
  if (loadId.trim() === "") throw new WorldTaskError(step, "a load id is required (the orders_ingest run id)");
  return {
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

/** Step 1: one direct read of the orders reader into stg.orders_raw, tagged with the load id. */
export async function pullOrdersBatch(input: OrdersIngestInput): Promise<PullReport> {
  const step = "pullOrdersBatch";
  return withFirstNodeEtl(input.config, async (clickhouse, platform) => {
    const file = await readSqlFile(path.join(ORDERS_DIR, "10-pull-batch.sql"), step);
    const values = await orderTemplateValues(platform, input.loadId, step);
    // A direct Kafka read needs its own setting on modern servers; the INSERT must reach the shards before parse reads them.
    const settings = { ...platform.kafkaDirectSelectSettings(), ...platform.syncDistributedInsertSettings() };
    const report = await runSqlFile({ step, clickhouse, file, values, settings, signal: input.signal, log: input.log });
    const landed = await countLanded(clickhouse, input.loadId);
    input.log(`pulled: ${landed} order documents under load ${input.loadId}`);
    return { loadId: input.loadId, landed, file: report };
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
