// The world's routers: where each message of hits and orders lands, with the leading fields its
// landing needs and the Kafka headers that landing declares. A router's landing is either fixed (a
// bench's or a test's table) or read from the options in force at every message (the world loader's),
// so a hot reload sends the messages read after it to the new table; rows already buffered flush
// where they were routed.
import type { LoaderConfig } from "../config/index.ts";
import { addHeaderFields, declaredHeaders, type HeaderClash, type HeaderColumn } from "./headers.ts";
import type { LoaderMetrics } from "./metrics.ts";
import type { LeadingFieldValue, SpliceRouter } from "./splice.ts";
import { targetName, type LoaderMessage, type LoaderTarget } from "./types.ts";

/** The routes' defaults (loader.options.routes in src/config/loader.ts says the same). */
export const HITS_LANDING_TABLE = "stg.hits_in";
export const ORDERS_LANDING_TABLE = "stg.orders_raw_dist";

/** The fields each router writes itself: a header declared onto one of them is never promoted. */
export const ROUTER_FIELDS = {
  hits: ["_raw", "kafka_topic", "kafka_partition", "kafka_offset"],
  orders: ["raw", "kafka_topic", "kafka_partition", "kafka_offset", "_load_id"],
} as const satisfies Record<keyof LoaderConfig["routes"], readonly string[]>;

export type WorldRoute = keyof typeof ROUTER_FIELDS;

/** Where a router sends messages now: the landing table and the headers promoted to its columns. */
export interface Landing {
  readonly table: string;
  readonly headers: readonly HeaderColumn[];
}

/** A fixed landing table (no header promoted), or the landing of the options in force, asked at every message. */
export type LandingSource = string | (() => Landing);

export interface RouterOptions {
  /** Told of each declared header left out because its value is not UTF-8 (loader_header_values_skipped_total). */
  onHeaderSkipped?: (target: LoaderTarget, header: string) => void;
}

/** Router options that count each header value left out in loader_header_values_skipped_total{table,header}. */
export function countSkippedHeaders(metrics: LoaderMetrics): RouterOptions {
  return { onHeaderSkipped: (target, header) => metrics.headerValuesSkipped.inc({ table: targetName(target), header }) };
}

type OwnFields = (message: LoaderMessage, text: string) => Record<string, LeadingFieldValue>;

/** Partition p lands on node p mod n, in the table `source` names now, with the router's own fields and the declared headers. */
function partitionRouter(who: string, nodes: readonly string[], source: LandingSource, ownFields: OwnFields, options: RouterOptions): SpliceRouter {
  if (nodes.length === 0) throw new Error(`${who}: the stand config lists no ClickHouse node`);
  const targetsOf = (table: string): LoaderTarget[] => nodes.map((node) => ({ node, table }));
  if (typeof source === "string") {
    const targets = targetsOf(source);
    return (message, text) => ({ target: targets[message.partition % targets.length] ?? (targets[0] as LoaderTarget), fields: ownFields(message, text) });
  }
  // the same target objects while the table stays the same (the core keys its buffers by their names)
  let table = "";
  let targets: LoaderTarget[] = [];
  return (message, text) => {
    const landing = source();
    if (landing.table !== table) {
      table = landing.table;
      targets = targetsOf(table);
    }
    const target = (targets[message.partition % targets.length] ?? targets[0]) as LoaderTarget;
    const fields = ownFields(message, text);
    if (landing.headers.length > 0) addHeaderFields(fields, message.headers, landing.headers, (header) => options.onHeaderSkipped?.(target, header));
    return { target, fields };
  };
}

/** hits partition p lands in `landing` on node p mod n (the world's is stg.hits_in, or routes.hits; a bench passes its own table). */
export function hitsRouter(nodes: readonly string[], landing: LandingSource = HITS_LANDING_TABLE, options: RouterOptions = {}): SpliceRouter {
  return partitionRouter("hitsRouter", nodes, landing, (message, text) => ({ _raw: text, kafka_topic: message.topic, kafka_partition: message.partition, kafka_offset: message.offset }), options);
}

/** Every order lands in `landing` on `node` as one row: the document as text, its offsets, and no load claiming it yet. */
export function ordersRouter(node: string, landing: LandingSource = ORDERS_LANDING_TABLE, options: RouterOptions = {}): SpliceRouter {
  return partitionRouter("ordersRouter", [node], landing, (message, text) => ({ raw: text, kafka_topic: message.topic, kafka_partition: message.partition, kafka_offset: message.offset, _load_id: "" }), options);
}

/**
 * The loader options in force, swapped whole by a hot reload (WorldLoader.reconfigure), and the
 * landings its routers read from them: worked out once per options object, so a message costs
 * one comparison.
 */
export class OptionsInForce {
  constructor(private config: LoaderConfig) {}

  get current(): LoaderConfig {
    return this.config;
  }

  set(next: LoaderConfig): void {
    this.config = next;
  }

  /** A router's LandingSource for `route`: its table and declared headers under the options in force. */
  landing(route: WorldRoute): () => Landing {
    let seen: LoaderConfig | undefined;
    let landing: Landing = { table: "", headers: [] };
    return () => {
      if (seen !== this.config) {
        seen = this.config;
        const table = seen.routes[route];
        landing = { table, headers: declaredHeaders(seen, table, ROUTER_FIELDS[route]).columns };
      }
      return landing;
    };
  }

  /** Headers the world's landings declare onto a column their router writes itself (never promoted; said at start and reload). */
  clashes(): HeaderClash[] {
    return (Object.keys(ROUTER_FIELDS) as WorldRoute[]).flatMap((route) => declaredHeaders(this.config, this.config.routes[route], ROUTER_FIELDS[route]).clashes);
  }
}
