// The dq_check DAG's work: measure every data-quality check (sql/dq/checks/*.sql) into
// dm.dq_summary under the run, publish the run's results day by day (sql/dq/publish.sql), and read
// one check's published results back so its task can fail on them.
//
// Account: etl, like the ETL (SELECT and INSERT … SELECT only). A try takes one _version above
// every dds/dm version (tasks/etl.ts nextRunVersion); a repeated try of the same run rewrites the
// same keys (data_date, check_name, run) with a newer version, so the results converge.
import path from "node:path";
import { type StandClickHouse, type Platform, querySqlFile, readSqlFile, readSqlFragment, registeredSqlFiles, runSqlFile, renderTemplate, type TemplateValues, quoteString } from "../src/clickhouse/index.ts";
import { repoRoot } from "../src/config/index.ts";
import { NonRetryableError } from "../src/runner/index.ts";
import { WorldTaskError, type TaskIo, PLANTED_ORDER_CLASSES, type Passport, describePosition, type PositionReading } from "../src/world/index.ts";
import { nextRunVersion, withEtl, type EtlConnectionOptions } from "./etl.ts";
import { runTemplateValues, serverNow } from "./etl-sql.ts";

export const DQ_DIR = path.join(repoRoot, "sql", "dq");

/** The checks, in the order they are measured; each has sql/dq/checks/<name>.sql and a check_<name>
 * task. A file there that is not listed (or a name without its file) fails the DAG's load. */
export const DQ_CHECKS = registeredSqlFiles(
  path.join(DQ_DIR, "checks"),
  [
    "freshness",
    "sessions_vs_reference",
    "classes_vs_inventory",
    "mart_daily_traffic",
    "mart_daily_funnel",
    "mart_daily_revenue",
    "mart_daily_dq_errors",
    "mart_purchase_vs_orders",
  ],
  "a data-quality check",
);
export type DqCheckName = (typeof DQ_CHECKS)[number];

/** The mart's classes: the five the generator plants, and awaiting_order (never on a closed day). */
export const MISMATCH_CLASSES = ["awaiting_order", ...PLANTED_ORDER_CLASSES] as const;

/** How many offending keys a failed check logs. */
export const LOGGED_KEYS = 20;

export interface MeasureInput extends EtlConnectionOptions, TaskIo {
  /** The dq_check run id: the _load_id of every result row and of the publishing commit rows. */
  loadId: string;
  /** world_position as the task read it: freshness compares ODS with its last played day. */
  position: PositionReading;
  passport: Passport;
}

export interface CheckSummary {
  check: DqCheckName;
  days: number;
  failingDays: string[];
  failedRows: number;
}

export interface MeasureReport {
  loadId: string;
  version: string;
  checks: CheckSummary[];
}

export interface DayResult {
  data_date: string;
  reference_rows: string;
  actual_rows: string;
  failed_rows: string;
  status: string;
  offending_keys: string[];
}

/** A check found failed rows: a verdict on the data, so retrying the task would not help. */
export class DqCheckFailedError extends NonRetryableError {
  constructor(
    readonly check: DqCheckName,
    readonly failedRows: number,
    readonly failingDays: readonly string[],
    keys: readonly string[],
  ) {
    super(
      `dq check ${check} failed: ${failedRows} failed row(s) on ${failingDays.length} day(s) [${failingDays.join(", ")}]; ` +
        `first keys: ${keys.slice(0, 3).join("; ")}. The results are in dm.dq_summary_v (check_name = '${check}'); ` +
        `fix the layer it names, rebuild it (etl_pipeline) and run dq_check again`,
    );
  }
}

function addDays(isoDate: string, days: number): string {
  const ms = Date.parse(`${isoDate}T00:00:00Z`) + days * 86_400_000;
  return new Date(ms).toISOString().slice(0, 10);
}

const sqlDate = (isoDate: string): string => `toDate(${quoteString(isoDate)})`;

/** The planted classes of every passport horizon day as a subquery (order_day, mismatch_class, planted). */
export function plantedClassesSql(passport: Passport): string {
  const tuples = passport.order_classes.days.flatMap((day) =>
    MISMATCH_CLASSES.map((cls) => {
      const planted = cls === "awaiting_order" ? 0 : day.classes[cls];
      return `(${quoteString(day.date)}, ${quoteString(cls)}, toUInt32(${planted}))`;
    }),
  );
  if (tuples.length === 0) return "(SELECT toDate('1970-01-01') AS order_day, 'none' AS mismatch_class, toUInt64(0) AS planted LIMIT 0)";
  return `(SELECT toDate(tupleElement(t, 1)) AS order_day, tupleElement(t, 2) AS mismatch_class, toUInt64(tupleElement(t, 3)) AS planted FROM (SELECT arrayJoin([${tuples.join(", ")}]) AS t))`;
}

/** The day the position says was played last: start_date + position - 1. */
export function lastPlayedDay(passport: Passport, position: PositionReading): string {
  if (position.kind !== "number" || position.value < 1) {
    throw new WorldTaskError("measureDataQuality", `${describePosition(position)}: there is no played day to check; create the world first (make up)`);
  }
  return addDays(passport.start_date, position.value - 1);
}

/** The {{dq.*}} values every check file may use. */
export function dqTemplateValues(passport: Passport, position: PositionReading): Record<string, string> {
  const horizon = passport.order_classes.days.at(-1)?.date ?? addDays(passport.start_date, -1);
  return {
    "dq.planted_classes": plantedClassesSql(passport),
    "dq.horizon_last_day": sqlDate(horizon),
    "dq.closing_lag_days": String(passport.order_window_days - 1),
    "dq.last_played_day": sqlDate(lastPlayedDay(passport, position)),
    "dq.position_text": quoteString(describePosition(position)),
  };
}

async function recordCheck(clickhouse: StandClickHouse, platform: Platform, check: DqCheckName, values: TemplateValues, io: TaskIo): Promise<void> {
  const step = `dq:${check}`;
  const fragmentPath = path.join(DQ_DIR, "checks", `${check}.sql`);
  const fragment = renderTemplate(await readSqlFragment(fragmentPath, step), values, path.relative(repoRoot, fragmentPath));
  const file = await readSqlFile(path.join(DQ_DIR, "record-check.sql"), step);
  const checkValues = { ...values, "dq.check_name": quoteString(check), "dq.check_rows": fragment };
  await runSqlFile({ step, clickhouse, file, values: checkValues, settings: platform.syncDistributedInsertSettings(), signal: io.signal, log: io.log });
}

async function summarise(clickhouse: StandClickHouse, loadId: string, version: bigint): Promise<CheckSummary[]> {
  const rows = await clickhouse.query<{ check_name: string; days: string; failing: string[]; failed: string }>(
    `SELECT check_name, toString(count()) AS days, arraySort(groupArrayIf(toString(data_date), failed_rows > 0)) AS failing, toString(sum(failed_rows)) AS failed
       FROM dm.dq_summary_dist
      WHERE _load_id = ${quoteString(loadId)} AND _version = ${version.toString()}
      GROUP BY check_name`,
  );
  const byName = new Map(rows.map((r) => [r.check_name, r]));
  return DQ_CHECKS.map((check) => {
    const row = byName.get(check);
    return { check, days: Number(row?.days ?? 0), failingDays: row?.failing ?? [], failedRows: Number(row?.failed ?? 0) };
  });
}

/**
 * Measures every check into dm.dq_summary under this run, then publishes the run's results per day.
 * It does not fail on failed rows: the check tasks do, after the results are visible.
 */
export async function measureDataQuality(input: MeasureInput): Promise<MeasureReport> {
  const dqValues = dqTemplateValues(input.passport, input.position);
  return withEtl(input, async (clickhouse, platform) => {
    const startedAt = await serverNow(clickhouse);
    const version = await nextRunVersion(clickhouse);
    const values = { ...runTemplateValues(platform, { version, loadId: input.loadId, startedAt, dates: [] }), ...dqValues };
    input.log(`dq: run ${input.loadId}, version ${version}, as etl on ${clickhouse.target.node}; last played day ${dqValues["dq.last_played_day"]}`);
    for (const check of DQ_CHECKS) await recordCheck(clickhouse, platform, check, values, input);
    const publish = await readSqlFile(path.join(DQ_DIR, "publish.sql"), "dq:publish");
    await runSqlFile({ step: "dq:publish", clickhouse, file: publish, values, settings: platform.syncDistributedInsertSettings(), signal: input.signal, log: input.log });
    const checks = await summarise(clickhouse, input.loadId, version);
    for (const c of checks) {
      input.log(`  ${c.check}: ${c.days} day(s), ${c.failedRows === 0 ? "pass" : `FAIL: ${c.failedRows} failed row(s) on [${c.failingDays.join(", ")}]`}`);
    }
    return { loadId: input.loadId, version: version.toString(), checks };
  });
}

export interface CheckResultsInput extends EtlConnectionOptions, TaskIo {
  loadId: string;
  check: DqCheckName;
}

/** One check's published results of the run, per day (dm.dq_summary_v). */
export async function readCheckResults(input: CheckResultsInput): Promise<DayResult[]> {
  return withEtl(input, async (clickhouse, platform) => {
    const file = await readSqlFile(path.join(DQ_DIR, "published-results.sql"), `dq:${input.check}`);
    const values = {
      ...runTemplateValues(platform, { version: 0n, loadId: input.loadId, startedAt: "1970-01-01 00:00:00", dates: [] }),
      "dq.check_name": quoteString(input.check),
    };
    return querySqlFile<DayResult>({ step: `dq:${input.check}`, clickhouse, file, values, signal: input.signal });
  });
}

/** Logs the check's verdict per day and throws DqCheckFailedError when any day has failed rows. */
export function assertCheckPassed(check: DqCheckName, results: readonly DayResult[], log: TaskIo["log"]): void {
  const failing = results.filter((r) => Number(r.failed_rows) > 0);
  for (const r of results) {
    log(`${check} ${r.data_date}: reference ${r.reference_rows}, actual ${r.actual_rows}, failed ${r.failed_rows} — ${r.status}`);
  }
  if (results.length === 0) log(`${check}: no data dates to check`);
  if (failing.length === 0) return;
  const keys = failing.flatMap((r) => r.offending_keys).slice(0, LOGGED_KEYS);
  log(`${check}: offending keys (up to ${LOGGED_KEYS}):`);
  for (const key of keys) log(`  ${key}`);
  const failedRows = failing.reduce((sum, r) => sum + Number(r.failed_rows), 0);
  throw new DqCheckFailedError(check, failedRows, failing.map((r) => r.data_date), keys);
}
