// Run lists as Airflow's GET /dags/{dag_id}/dagRuns and POST /dags/~/dagRuns/list serve them: one DAG
// or every DAG, Airflow's filters (ranges on run_after, logical_date, start_date, end_date,
// updated_at and duration; states, run types, versions; patterns on run id, DAG id and triggering
// user; conf_contains) and several sort keys, one page with the total count.
import type pg from "pg";
import type { Queryable } from "./db.ts";
import { orderBy, pageTotal, type Range, type SortKey, Where } from "./list-sql.ts";
import { runColumns, type RunRow, toRunRecord } from "./read-models.ts";
import type { DagRunRecord, Page, RunState } from "./types.ts";

export const RUN_SORT_FIELDS = [
  "id", "state", "dag_id", "run_id", "logical_date", "partition_date", "run_after", "start_date", "end_date", "updated_at", "conf", "duration", "dag_run_id",
] as const;
export type RunSortField = (typeof RUN_SORT_FIELDS)[number];

const SORT_COLUMNS: Record<RunSortField, string> = {
  id: "r.id",
  state: "r.state",
  dag_id: "r.dag_id",
  run_id: "r.run_id",
  dag_run_id: "r.run_id",
  logical_date: "r.logical_date",
  // no partitions here: every run's partition_date is null, so it orders nothing
  partition_date: "null::timestamptz",
  run_after: "r.queued_at",
  start_date: "r.start_date",
  end_date: "r.end_date",
  updated_at: "r.updated_at",
  conf: "r.conf::text",
  duration: "extract(epoch from r.end_date - r.start_date)",
};

export interface RunListQuery {
  /** The DAGs whose runs to list; null: every DAG (Airflow's `~`). */
  dagIds: readonly string[] | null;
  limit: number;
  offset: number;
  /** A filter on what no run here has (a partition, an asset, a bundle version) was given: nothing matches. */
  matchNone?: boolean;
  states?: readonly RunState[];
  /** The runner's run types (manual, scheduled, triggered); any other matches none. */
  runTypes?: readonly string[];
  runAfter?: Range<Date>;
  logicalDate?: Range<Date>;
  startDate?: Range<Date>;
  endDate?: Range<Date>;
  updatedAt?: Range<Date>;
  /** Seconds from start to end; a run not ended has none and matches no duration bound. */
  duration?: Range<number>;
  confContains?: string;
  versionNumbers?: readonly number[];
  runIdPattern?: string;
  runIdPrefix?: string;
  dagIdPattern?: string;
  dagIdPrefix?: string;
  triggeringUserPattern?: string;
  triggeringUserPrefix?: string;
  /** Empty: newest first (by id). */
  orderBy: readonly SortKey<RunSortField>[];
}

/** The user a run was triggered by, as serialize.ts writes it (`rest_api:user:<name>`). */
const TRIGGERING_USER = "substring(r.triggered_by from '^(?:cli|rest_api):user:(.+)$')";

function whereOf(q: RunListQuery): Where {
  const w = new Where();
  if (q.dagIds !== null) w.anyOf("r.dag_id", q.dagIds, "text");
  w.never(q.matchNone === true ? true : undefined);
  w.anyOf("r.state", q.states, "text")
    .anyOf("r.run_type", q.runTypes, "text")
    .range("r.queued_at", q.runAfter)
    .range("r.logical_date", q.logicalDate)
    .range("r.start_date", q.startDate)
    .range("r.end_date", q.endDate)
    .range("r.updated_at", q.updatedAt)
    .range(SORT_COLUMNS.duration, q.duration)
    .contains("r.conf::text", q.confContains)
    .pattern("r.run_id", q.runIdPattern)
    .prefix("r.run_id", q.runIdPrefix)
    .pattern("r.dag_id", q.dagIdPattern)
    .prefix("r.dag_id", q.dagIdPrefix)
    .pattern(TRIGGERING_USER, q.triggeringUserPattern)
    .prefix(TRIGGERING_USER, q.triggeringUserPrefix);
  if (q.versionNumbers !== undefined) {
    w.add(`exists (select 1 from runner.dag_versions v where v.id = r.dag_version_id and v.version_number = any(${w.param(q.versionNumbers)}::integer[]))`);
  }
  return w;
}

export async function readRunList(db: Queryable | pg.Pool, q: RunListQuery): Promise<Page<DagRunRecord>> {
  const w = whereOf(q);
  const where = w.toString();
  const order = orderBy(q.orderBy, SORT_COLUMNS, "r.id", "r.id desc");
  const limit = w.param(q.limit);
  const offset = w.param(q.offset);
  const page = await db.query<RunRow & { total: string }>(
    `select ${runColumns("r")}, count(*) over () as total from runner.dag_runs r where ${where} order by ${order} limit ${limit} offset ${offset}`,
    w.values,
  );
  const total = await pageTotal(db, page.rows, q.offset, `select count(*) as total from runner.dag_runs r where ${where}`, w.values.slice(0, -2));
  return { items: page.rows.map(toRunRecord), totalEntries: total };
}
