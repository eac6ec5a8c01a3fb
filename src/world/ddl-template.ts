// The one renderer for the canonical DDL templates in sql/ddl/. A placeholder is `{{name}}`
// (letters, digits, `_` and `.`); every value is SQL text ready to paste — a quoted literal, a
// type, an engine clause — so the SQL files read as SQL. Server-dependent text comes only from
// the platform layer (src/clickhouse/platform.ts). ClickHouse's own `{shard}`/`{replica}` macros
// use single braces and pass through untouched. Placeholders do not belong in comments: a
// multi-line value would break out of a `--` comment.
import { readFile } from "node:fs/promises";
import type { Platform } from "../clickhouse/platform.ts";
import { quoteIdentifier, quoteString } from "../clickhouse/sql.ts";
import { kafkaBroker, type StandConfig } from "../config/stand.ts";
import { CATALOG_CSV_PATH, HITS_CONSUMER_GROUP, HITS_TOPIC, ORDERS_CONSUMER_GROUP, ORDERS_TOPIC } from "./constants.ts";

export type TemplateValues = Readonly<Record<string, string>>;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g;

export class DdlTemplateError extends Error {
  constructor(
    readonly file: string,
    readonly placeholder: string,
    message: string,
  ) {
    super(message);
    this.name = "DdlTemplateError";
  }
}

/** Replaces every `{{name}}`; an unknown name or a stray `{{` is an error naming the file and line. */
export function renderTemplate(text: string, values: TemplateValues, file: string, firstLine = 1): string {
  const rendered = text.replace(PLACEHOLDER, (match, name: string, offset: number) => {
    const value = values[name];
    if (value === undefined) {
      const line = firstLine + (text.slice(0, offset).match(/\n/g)?.length ?? 0);
      throw new DdlTemplateError(file, name, `${file}:${line}: unknown placeholder ${match} (known: ${Object.keys(values).sort().join(", ")})`);
    }
    return value;
  });
  const stray = /\{\{|\}\}/.exec(text.replace(PLACEHOLDER, ""));
  if (stray) {
    const line = firstLine + (text.slice(0, stray.index).match(/\n/g)?.length ?? 0);
    throw new DdlTemplateError(file, stray[0], `${file}:${line}: malformed placeholder near '${stray[0]}'`);
  }
  return rendered;
}

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
