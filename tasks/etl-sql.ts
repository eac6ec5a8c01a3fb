// Running the ETL's own SQL files (sql/etl/, sql/checks/): read a file, split it into statements
// with dbgate-query-splitter (src/clickhouse/sql-statements.ts), render each statement's {{placeholders}}
// with the one template renderer the DDL uses, and run the statements in order on one account's
// connection. Every failure names the file, the statement, the account and the node.
import path from "node:path";
import { type StandClickHouse, type Platform, quoteString } from "../src/clickhouse/index.ts";
import { repoRoot } from "../src/config/index.ts";

export const ETL_DIR = path.join(repoRoot, "sql", "etl");

/** ETL statements write through Distributed tables and read back what they wrote, so they wait for the shards. */
export const ETL_REQUEST_TIMEOUT_MS = 300_000;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Checks and sorts run days (YYYY-MM-DD), without repeats. */
export function normalizeDates(dates: readonly string[]): string[] {
  for (const d of dates) {
    if (!ISO_DATE.test(d) || Number.isNaN(Date.parse(`${d}T00:00:00Z`))) throw new Error(`not a date YYYY-MM-DD: '${d}'`);
  }
  return [...new Set(dates)].sort();
}

/** What identifies one ETL run inside the SQL: its version, load id, start instant and days. */
export interface RunIdentity {
  version: bigint;
  loadId: string;
  /** The server's now() when the run began reading, 'YYYY-MM-DD HH:MM:SS' in UTC. */
  startedAt: string;
  dates: readonly string[];
}

/** Placeholder values every ETL file may use; the day placeholders exist only when the run has days. */
export function runTemplateValues(platform: Platform, run: RunIdentity): Record<string, string> {
  const values: Record<string, string> = {
    "run.version": run.version.toString(),
    "run.load_id": quoteString(run.loadId),
    "run.started_at": `toDateTime(${quoteString(run.startedAt)}, 'UTC')`,
    "platform.instant_now": platform.instantNow,
  };
  const dates = normalizeDates(run.dates);
  if (dates.length > 0) {
    // Strings in the IN set are converted to the column's Date type, and keep partition pruning.
    values["run.date_set"] = `(${dates.map(quoteString).join(", ")})`;
    values["run.date_array"] = `[${dates.map((d) => `toDate(${quoteString(d)})`).join(", ")}]`;
  }
  return values;
}

/** The server's clock, as the run's start instant (compared with _load_ts the servers stamped). */
export async function serverNow(clickhouse: StandClickHouse): Promise<string> {
  const rows = await clickhouse.query<{ now: string }>("SELECT formatDateTime(now(), '%Y-%m-%d %H:%M:%S', 'UTC') AS now");
  const now = rows[0]?.now;
  if (!now) throw new Error(`ClickHouse node ${clickhouse.target.node} returned no now()`);
  return now;
}
