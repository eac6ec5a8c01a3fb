// The world as numbers for the World page (src/web/pages/world-*.ts) and GET /api/v2/world/summary:
// rows per day in each layer, refused hits per reason, purchase_vs_orders classes per day and the
// data-quality results, read as `reader` through the Distributed tables and the published views.
// Each part is read on its own: a query that fails (ClickHouse down, a table missing mid-rebuild)
// becomes that part's error, never the whole answer's. The SQL is exported so tests run the same.
import { connectClickHouse, type StandClickHouse } from "../clickhouse/index.ts";
import type { StandConfig } from "../config/index.ts";
import { coerceError } from "../errors.ts";
import { odsValidHitsPerDateSql } from "../world/index.ts";

/** One part of the summary: its data, or why it could not be read. */
export type Part<T> = { ok: true; data: T } | { ok: false; error: string };

/** Counts per day, one series per name; `counts[i]` belongs to `dates[i]` (0 when the day has none). */
export interface DailySeries {
  dates: string[];
  series: { name: string; source: string; counts: number[] }[];
}

export interface DqDayResult {
  date: string;
  reference_rows: number;
  actual_rows: number;
  failed_rows: number;
  offending_keys: string[];
}

export interface DqCheckResult {
  check: string;
  status: "pass" | "fail";
  run_id: string;
  days: number;
  failed_rows: number;
  /** The failing days, each with up to 20 offending keys (as dq_check recorded them). */
  failed_days: DqDayResult[];
}

export interface DqRunCell {
  run_id: string;
  started_at: string;
  /** Per check; a check the run did not record is absent. */
  checks: Record<string, { status: "pass" | "fail"; failed_rows: number }>;
}

export interface DqResults {
  latest: DqCheckResult[];
  /** Oldest first, at most DQ_HISTORY_RUNS. */
  runs: DqRunCell[];
}

export interface WorldNumbers {
  layers: Part<DailySeries>;
  /** Refused hits per reason (error_class). */
  errors: Part<DailySeries>;
  classes: Part<DailySeries>;
  dq: Part<DqResults>;
}

export const DQ_HISTORY_RUNS = 30;
export const MISMATCH_CLASS_ORDER = ["match", "amount_delta", "duplicate_event", "lost_event", "cancelled", "awaiting_order"] as const;

/** Rows per day and layer: [series name, source shown on the page, SQL answering d (date text), n]. */
export const LAYER_QUERIES: readonly (readonly [string, string, string])[] = [
  [
    "STG",
    "stg.hits_raw_dist: landed hits by EventDate (replayed copies included)",
    // a hit whose EventDate is not a canonical date (refused as bad_event_date) is on no day
    "SELECT EventDate AS d, count() AS n FROM stg.hits_raw_dist WHERE match(EventDate, '^[0-9]{4}-[0-9]{2}-[0-9]{2}$') AND toString(toDateOrZero(EventDate)) = EventDate GROUP BY d",
  ],
  ["ODS", "ods.event_dist FINAL: valid hits by EventDate, each hit once (sql/facts/ods-valid-hits-per-date.sql)", odsValidHitsPerDateSql()],
  ["DDS", "dds.session_v: sessions by session_date", "SELECT toString(session_date) AS d, count() AS n FROM dds.session_v GROUP BY d"],
  [
    "DM",
    "rows of the day marts (traffic, funnel, revenue, dq errors, purchase_vs_orders) by day",
    `SELECT d, sum(n) AS n FROM (
       SELECT toString(report_date) AS d, count() AS n FROM dm.daily_traffic_v GROUP BY d
       UNION ALL SELECT toString(report_date) AS d, count() AS n FROM dm.daily_funnel_v GROUP BY d
       UNION ALL SELECT toString(report_date) AS d, count() AS n FROM dm.daily_revenue_v GROUP BY d
       UNION ALL SELECT toString(report_date) AS d, count() AS n FROM dm.daily_dq_errors_v GROUP BY d
       UNION ALL SELECT toString(order_day) AS d, count() AS n FROM dm.purchase_vs_orders_v GROUP BY d
     ) GROUP BY d`,
  ],
];

export const ERRORS_QUERY = "SELECT toString(report_date) AS d, error_class AS c, sum(error_rows) AS n FROM dm.daily_dq_errors_v GROUP BY d, c";
export const CLASSES_QUERY = "SELECT toString(order_day) AS d, mismatch_class AS c, count() AS n FROM dm.purchase_vs_orders_v GROUP BY d, c";
export const DQ_LATEST_QUERY = `SELECT check_name, toString(data_date) AS d, reference_rows, actual_rows, failed_rows, status, offending_keys, run_id
  FROM dm.dq_summary_v ORDER BY check_name, d`;
export const DQ_HISTORY_QUERY = `SELECT _load_id AS run_id, check_name, countIf(status = 'fail') AS failed_days, sum(failed_rows) AS failed_rows,
       toString(min(_load_ts)) AS started_at
  FROM dm.dq_summary_dist FINAL GROUP BY run_id, check_name`;

interface CountRow {
  d: string;
  n: string | number;
}
interface ClassRow extends CountRow {
  c: string;
}

function failure<T>(err: unknown): Part<T> {
  return { ok: false, error: coerceError(err).message };
}

async function part<T>(read: () => Promise<T>): Promise<Part<T>> {
  try {
    return { ok: true, data: await read() };
  } catch (err) {
    return failure(err);
  }
}

/** The last `days` dates present in any series, oldest first. */
function windowDates(all: Iterable<string>, days: number): string[] {
  return [...new Set(all)].sort().slice(-days);
}

function toSeries(rowsByName: readonly { name: string; source: string; rows: readonly CountRow[] }[], days: number): DailySeries {
  const dates = windowDates(
    rowsByName.flatMap((s) => s.rows.map((r) => r.d)),
    days,
  );
  const series = rowsByName.map(({ name, source, rows }) => {
    const byDate = new Map(rows.map((r) => [r.d, Number(r.n)]));
    return { name, source, counts: dates.map((d) => byDate.get(d) ?? 0) };
  });
  return { dates, series };
}

/** Rows of (d, c, n) as one series per c, in `order` first, then any other class by name. */
function byClass(rows: readonly ClassRow[], days: number, source: string, order: readonly string[] = []): DailySeries {
  const names = [...new Set([...order.filter((c) => rows.some((r) => r.c === c)), ...rows.map((r) => r.c).sort()])];
  return toSeries(
    names.map((name) => ({ name, source, rows: rows.filter((r) => r.c === name) })),
    days,
  );
}

async function readLayers(ch: StandClickHouse, days: number): Promise<DailySeries> {
  const rows = await Promise.all(LAYER_QUERIES.map(([, , sql]) => ch.query<CountRow>(sql)));
  return toSeries(
    LAYER_QUERIES.map(([name, source], i) => ({ name, source, rows: rows[i] ?? [] })),
    days,
  );
}

interface DqLatestRow {
  check_name: string;
  d: string;
  reference_rows: string;
  actual_rows: string;
  failed_rows: string;
  status: string;
  offending_keys: string[];
  run_id: string;
}
interface DqHistoryRow {
  run_id: string;
  check_name: string;
  failed_days: string;
  failed_rows: string;
  started_at: string;
}

const passOrFail = (failed: boolean): "pass" | "fail" => (failed ? "fail" : "pass");

export function latestDqResults(rows: readonly DqLatestRow[]): DqCheckResult[] {
  const checks = [...new Set(rows.map((r) => r.check_name))].sort();
  return checks.map((check) => {
    const mine = rows.filter((r) => r.check_name === check);
    const failedDays = mine.filter((r) => r.status !== "pass");
    const newest = mine.reduce((a, b) => (b.d > a.d ? b : a));
    return {
      check,
      status: passOrFail(failedDays.length > 0),
      run_id: newest.run_id,
      days: mine.length,
      failed_rows: mine.reduce((sum, r) => sum + Number(r.failed_rows), 0),
      failed_days: failedDays.map((r) => ({
        date: r.d,
        reference_rows: Number(r.reference_rows),
        actual_rows: Number(r.actual_rows),
        failed_rows: Number(r.failed_rows),
        offending_keys: r.offending_keys,
      })),
    };
  });
}

export function dqHistory(rows: readonly DqHistoryRow[]): DqRunCell[] {
  const runs = new Map<string, DqRunCell>();
  for (const row of rows) {
    const run = runs.get(row.run_id) ?? { run_id: row.run_id, started_at: row.started_at, checks: {} };
    if (row.started_at < run.started_at) run.started_at = row.started_at;
    run.checks[row.check_name] = { status: passOrFail(Number(row.failed_days) > 0), failed_rows: Number(row.failed_rows) };
    runs.set(row.run_id, run);
  }
  return [...runs.values()].sort((a, b) => a.started_at.localeCompare(b.started_at) || a.run_id.localeCompare(b.run_id)).slice(-DQ_HISTORY_RUNS);
}

async function readDq(ch: StandClickHouse): Promise<DqResults> {
  const [latest, history] = await Promise.all([ch.query<DqLatestRow>(DQ_LATEST_QUERY), ch.query<DqHistoryRow>(DQ_HISTORY_QUERY)]);
  return { latest: latestDqResults(latest), runs: dqHistory(history) };
}

export interface WorldNumbersOptions {
  /** How many of the newest days to show. */
  days: number;
  config?: StandConfig;
  requestTimeoutMs?: number;
}

/** Every ClickHouse part of the summary, read in parallel over one `reader` connection. */
export async function readWorldNumbers(options: WorldNumbersOptions): Promise<WorldNumbers> {
  const ch = connectClickHouse({ account: "reader", config: options.config, requestTimeoutMs: options.requestTimeoutMs ?? 5000 });
  try {
    const [layers, errors, classes, dq] = await Promise.all([
      part(() => readLayers(ch, options.days)),
      part(async () => byClass(await ch.query<ClassRow>(ERRORS_QUERY), options.days, "dm.daily_dq_errors_v: error_rows by report_date and error_class")),
      part(async () =>
        byClass(await ch.query<ClassRow>(CLASSES_QUERY), options.days, "dm.purchase_vs_orders_v: orders by order_day and mismatch_class", MISMATCH_CLASS_ORDER),
      ),
      part(() => readDq(ch)),
    ]);
    return { layers, errors, classes, dq };
  } finally {
    await ch.close();
  }
}
