// Reading the built layers back for the ETL tests: every dds/dm view as sorted rows, with the run
// bookkeeping (_version, _load_id, _load_ts) kept apart, so two builds compare row for row.
import type { StandClickHouse } from "../../src/clickhouse/index.ts";

export const BUILT_VIEWS = [
  "dds.order_v",
  "dds.session_v",
  "dds.identity_v",
  "dm.daily_traffic_v",
  "dm.daily_funnel_v",
  "dm.daily_revenue_v",
  "dm.daily_dq_errors_v",
  "dm.purchase_vs_orders_v",
] as const;

const RUN_COLUMNS = ["_version", "_load_id", "_load_ts"];

export interface ViewSnapshot {
  /** Business columns of every row, one JSON text per row, sorted. */
  rows: string[];
  /** The distinct _version values the rows come from. */
  versions: string[];
}

export async function snapshotView(admin: StandClickHouse, view: string): Promise<ViewSnapshot> {
  const rows = await admin.query<Record<string, unknown>>(`SELECT * FROM ${view}`);
  const versions = new Set<string>();
  const business = rows.map((row) => {
    if (typeof row._version === "string" || typeof row._version === "number") versions.add(String(row._version));
    const kept = Object.fromEntries(Object.entries(row).filter(([k]) => !RUN_COLUMNS.includes(k)));
    return JSON.stringify(kept);
  });
  return { rows: business.sort(), versions: [...versions].sort() };
}

export async function snapshotAllViews(admin: StandClickHouse): Promise<Record<string, ViewSnapshot>> {
  const entries = await Promise.all(BUILT_VIEWS.map(async (v) => [v, await snapshotView(admin, v)] as const));
  return Object.fromEntries(entries);
}

/** Rows of a query as arrays of values in column order (numbers and strings as the server sent them). */
export async function tuples(admin: StandClickHouse, sql: string): Promise<unknown[][]> {
  const rows = await admin.query<Record<string, unknown>>(sql);
  return rows.map((r) => Object.values(r).map((v) => (typeof v === "string" && /^\d+$/.test(v) ? Number(v) : v)));
}
