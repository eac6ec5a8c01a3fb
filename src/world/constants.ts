// The world's fixed names: its Kafka topics and consumer groups, its ClickHouse databases and where
// its canonical files live. The DDL, the tasks and the tests all take them from here.
import path from "node:path";
import { inventoryPath, type WorldSize } from "../../generator/src/index.ts";
import { repoRoot } from "../config/index.ts";

export interface WorldTopic {
  readonly name: string;
  /** Exact partition count: the loader lands hits partition p on ClickHouse node p mod 2; orders has one. */
  readonly partitions: number;
}

export const HITS_TOPIC: WorldTopic = Object.freeze({ name: "hits", partitions: 2 });
export const ORDERS_TOPIC: WorldTopic = Object.freeze({ name: "orders", partitions: 1 });
export const WORLD_TOPICS: readonly WorldTopic[] = Object.freeze([HITS_TOPIC, ORDERS_TOPIC]);

export const HITS_CONSUMER_GROUP = "clickstream_hits";
export const ORDERS_CONSUMER_GROUP = "clickstream_orders";
export const WORLD_CONSUMER_GROUPS: readonly string[] = Object.freeze([HITS_CONSUMER_GROUP, ORDERS_CONSUMER_GROUP]);

/**
 * The application databases in drop order (SPEC: stg, the landing, first). lifecycle's allow-list is
 * exactly these.
 */
export const APPLICATION_DATABASES: readonly string[] = Object.freeze(["stg", "dm", "dds", "ods", "dic"]);

export const DDL_DIR = path.join(repoRoot, "sql", "ddl");
/** The passport of a world size (generator/src/inventory.ts writes them all). */
export function passportPath(size: WorldSize): string {
  return path.join(repoRoot, inventoryPath(size));
}
export const CATALOG_CSV_PATH = path.join(repoRoot, "data", "catalog", "products.csv");
export const GENERATOR_DIR = path.join(repoRoot, "generator");

/** Reasons a hit lands in ods.event_errors (column error_class), in the order the ingest checks them. */
export const HIT_ERROR_CLASSES = ["missing_id", "bad_id", "bad_timestamp", "bad_event_date", "unknown_event_type"] as const;
export type HitErrorClass = (typeof HIT_ERROR_CLASSES)[number];
