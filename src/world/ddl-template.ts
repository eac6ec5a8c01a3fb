// The values of the world's DDL templates in sql/ddl/ (rendered by src/clickhouse/sql-template.ts):
// the cluster, the inlined catalog, and server-dependent text, which comes only from the platform
// layer (src/clickhouse/platform.ts).
import { readFile } from "node:fs/promises";
import { type Platform, quoteIdentifier, type TemplateValues } from "../clickhouse/index.ts";
import type { StandConfig } from "../config/index.ts";
import { CATALOG_CSV_PATH } from "./constants.ts";
import { errorMessage } from "../errors.ts";

export interface WorldTemplateInputs {
  platform: Platform;
  config: StandConfig;
  /** Contents of data/catalog/products.csv (header included), inlined into the dic load. */
  catalogCsv: string;
}

/** Every placeholder the world's DDL may use, for this server and this stand. */
export function worldTemplateValues({ platform, config, catalogCsv }: WorldTemplateInputs): TemplateValues {
  return Object.freeze({
    cluster: quoteIdentifier(config.clickhouse.cluster),
    "platform.instant_type": platform.instantType,
    "platform.instant_now": platform.instantNow,
    "platform.low_cardinality_string": platform.lowCardinality("String"),
    "platform.hits_landing_source": platform.viewChainSource("stg.hits_raw_mv", "stg.hits_raw"),
    "platform.stg_retention": platform.ttlClause("toDate(_load_ts) + INTERVAL 3 DAY SETTINGS ttl_only_drop_parts = 1"),
    "platform.errors_retention": platform.ttlClause("toDate(_load_ts) + INTERVAL 1 MONTH SETTINGS ttl_only_drop_parts = 1"),
    "platform.dead_letters_retention": platform.ttlClause("toDate(dead_at) + INTERVAL 1 MONTH"),
    "catalog.products_csv": catalogCsv.endsWith("\n") ? catalogCsv : `${catalogCsv}\n`,
  });
}

export async function readCatalogCsv(file: string = CATALOG_CSV_PATH): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read the product catalog ${file}: ${errorMessage(err)}; it is written by the generator's inventory --write`, { cause: err });
  }
}
