// Observations of the world for the lifecycle story: the passport's exact ODS, the dates DDS and DM
// were built for, a snapshot to prove "changed nothing", a drift made in the ledger, and the CLI.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { launchArgs, repoRoot } from "../../src/config/index.ts";
import { layerCounts, loadExpectations, runClickHouseChecks } from "../../src/world-ops/index.ts";
import type { Passport } from "../../src/world/index.ts";
import { ledgerRowCount, odsByDate, positionHistory, readPositionText, withClickHouse, withRunnerDb, type CommandResult } from "./rest-world.ts";

/** ODS holds exactly the passport: its dates, its valid events per date (deduplicated), its refused hits. */
export async function expectCanonicalOds(passport: Passport): Promise<void> {
  const ods = await odsByDate();
  assert.deepEqual(Object.keys(ods.byDate), passport.dates, "ODS holds exactly the passport dates");
  for (const day of passport.days) assert.equal(ods.byDate[day.date], day.valid, `valid events on ${day.date}`);
  assert.equal(ods.uniqueWatchIds, passport.totals.valid, "no event twice");
  assert.equal(ods.errors, passport.totals.invalid, "refused hits in ods.event_errors");
}

export async function ddsAndDmDates(): Promise<{ dds: string[]; dm: string[] }> {
  return withClickHouse(async (ch) => {
    const dates = async (sql: string) => (await ch.query<{ d: string }>(sql)).map((r) => r.d);
    return {
      dds: await dates("SELECT DISTINCT toString(session_date) AS d FROM dds.session_dist ORDER BY d"),
      dm: await dates("SELECT DISTINCT toString(report_date) AS d FROM dm.daily_traffic_dist ORDER BY d"),
    };
  });
}

export interface WorldSnapshot {
  position: string | null;
  positionChanges: number;
  ledgerRows: number;
  layers: Awaited<ReturnType<typeof layerCounts>>;
  /** check-clickhouse's results as name = actual (what make check-clickhouse prints). */
  checks: Record<string, string>;
}

export async function worldSnapshot(): Promise<WorldSnapshot> {
  const results = await runClickHouseChecks({ expectations: await loadExpectations() });
  return {
    position: await readPositionText(),
    positionChanges: (await positionHistory()).length,
    ledgerRows: await ledgerRowCount(),
    layers: await layerCounts(),
    checks: Object.fromEntries(results.map((r) => [r.name, `${r.ok ? "OK" : "RED"} ${r.actual}`])),
  };
}

/**
 * Drift without editing sql/ddl/ (shared with the rest of the suite): a newer build in the ledger,
 * copied from the current one with 00-databases.sql's checksum altered, is what the world was
 * "built with" until it is removed again.
 */
export async function recordFakeDrift(): Promise<{ rows: number; remove(): Promise<void> }> {
  const runId = `test_fake_drift__${Date.now()}`;
  const rows = await withRunnerDb(async (c) => {
    const inserted = await c.query(
      `insert into world.schema_ledger (file, checksum, statements, dag_id, run_id, task_id, server_version, applied_at)
       select file, case when file = '00-databases.sql' then repeat('0', 64) else checksum end, statements, dag_id, $1, task_id, server_version, now()
         from world.schema_ledger
        where run_id = (select run_id from world.schema_ledger order by applied_at desc, id desc limit 1)`,
      [runId],
    );
    return inserted.rowCount ?? 0;
  });
  assert.ok(rows > 0, "a build to copy");
  return { rows, remove: () => withRunnerDb(async (c) => void (await c.query("delete from world.schema_ledger where run_id = $1", [runId]))) };
}

/** The runner CLI (src/cli/main.ts) as a user runs it. */
export function runCli(args: readonly string[]): Promise<CommandResult> {
  const started = Date.now();
  const child = spawn(process.execPath, launchArgs(path.join(repoRoot, "src", "cli", "main.ts"), ...args), { cwd: repoRoot });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? 1, stdout, stderr, seconds: (Date.now() - started) / 1000 }));
  });
}
