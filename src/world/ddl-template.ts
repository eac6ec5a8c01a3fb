// The values of the world's DDL templates in sql/ddl/ (rendered by src/clickhouse/sql-template.ts):
// names of the world's topics and groups, the cluster, the inlined catalog, and server-dependent
// text, which comes only from the platform layer (src/clickhouse/platform.ts).
import { readFile } from "node:fs/promises";
import type { Platform } from "../clickhouse/platform.ts";
import { quoteIdentifier, quoteString } from "../clickhouse/sql.ts";
import { kafkaBroker, type StandConfig } from "../config/stand.ts";
import type { TemplateValues } from "../clickhouse/sql-template.ts";
import { CATALOG_CSV_PATH, HITS_CONSUMER_GROUP, HITS_TOPIC, ORDERS_CONSUMER_GROUP, ORDERS_TOPIC } from "./constants.ts";

export interface WorldTemplateInputs {
  platform: Platform;
  config: StandConfig;
  /** Contents of data/catalog/products.csv (header included), inlined into the dic load. */
  catalogCsv: string;
}

/** Every placeholder the world's DDL may use, for this server and this stand. */
export function worldTemplateValues({ platform, config, catalogCsv }: WorldTemplateInputs): TemplateValues {
  const brokers = kafkaBroker(config);
  return Object.freeze({
    cluster: quoteIdentifier(config.clickhouse.cluster),
    hits_topic: quoteString(HITS_TOPIC.name),
    orders_topic: quoteString(ORDERS_TOPIC.name),
    hits_reader_engine: platform.kafkaEngine({ brokers, topic: HITS_TOPIC.name, group: HITS_CONSUMER_GROUP, format: "JSONEachRow" }),
    orders_reader_engine: platform.kafkaEngine({
      brokers, topic: ORDERS_TOPIC.name, group: ORDERS_CONSUMER_GROUP, format: "WholeMessage", commitOnSelect: true,
    }),
    "platform.instant_type": platform.instantType,
    "platform.instant_now": platform.instantNow,
    "platform.low_cardinality_string": platform.lowCardinality("String"),
    "platform.hits_landing_source": platform.viewChainSource("stg.hits_raw_mv", "stg.hits_raw"),
    "platform.kafka_partition": platform.kafkaPartitionExpression,
    "platform.kafka_offset": platform.kafkaOffsetExpression,
    "platform.stg_retention": platform.ttlClause("toDate(_load_ts) + INTERVAL 3 DAY SETTINGS ttl_only_drop_parts = 1"),
    "platform.errors_retention": platform.ttlClause("toDate(_load_ts) + INTERVAL 1 MONTH SETTINGS ttl_only_drop_parts = 1"),
    "catalog.products_csv": catalogCsv.endsWith("\n") ? catalogCsv : `${catalogCsv}\n`,
  });
}

export async function readCatalogCsv(file: string = CATALOG_CSV_PATH): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read the product catalog ${file}: ${(err as Error).message}; it is written by the generator's inventory --write`, { cause: err });
  }
}
