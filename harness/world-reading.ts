// An exact reading of the test stand's world, for tests that must tell whether two worlds can be told
// apart (a restore against the save): the world guard's reading (position, rows of every table read
// merged, topic end offsets, committed group offsets) plus, per table and node, a checksum of every
// column of every row read merged (FINAL where merges fold rows), and check-clickhouse's results.
import { connectClickHouse } from "../src/clickhouse/client.ts";
import { quoteIdentifier, quoteString } from "../src/clickhouse/sql.ts";
import type { StandConfig } from "../src/config/stand.ts";
import { FOLDING_ENGINE, SKIPPED_ENGINES, takeWorldSnapshot, diffSnapshots, type WorldSnapshot } from "../src/world-ops/guard.ts";
import { APPLICATION_DATABASES } from "../src/world/constants.ts";
import { loadExpectations, runClickHouseChecks } from "../src/world-ops/checks.ts";

export interface ExactWorld {
  guard: WorldSnapshot;
  /** "node db.table" → "rows:checksum", read merged. */
  checksums: Record<string, string>;
  /** check-clickhouse: "name" → "OK actual" or "RED actual". */
  checks: Record<string, string>;
}


async function tableChecksums(config: StandConfig): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const node of config.clickhouse.nodes) {
    const ch = connectClickHouse({ node: node.name, account: "reader", config, requestTimeoutMs: 60_000 });
    try {
      const tables = await ch.query<{ database: string; name: string; engine: string }>(
        `SELECT database, name, engine FROM system.tables WHERE database IN (${APPLICATION_DATABASES.map(quoteString).join(", ")})
           AND engine NOT IN (${SKIPPED_ENGINES.map(quoteString).join(", ")}) ORDER BY database, name`,
      );
      for (const t of tables) {
        const columns = await ch.query<{ name: string }>(
          `SELECT name FROM system.columns WHERE database = ${quoteString(t.database)} AND table = ${quoteString(t.name)} ORDER BY name`,
        );
        // 18.16 runs out of memory (1.86 GiB) on FINAL over all ~50 columns of ods.event at 30 days,
        // and fits in eight at a time: one sum per group of columns
        const final = FOLDING_ENGINE.test(t.engine) ? " FINAL" : "";
        const sums: string[] = [];
        let rowsRead = "?";
        for (let i = 0; i < columns.length; i += 8) {
          const hashed = columns.slice(i, i + 8).map((c) => `cityHash64(toString(${quoteIdentifier(c.name)}))`).join(", "); // toString: 18.16 hashes no Decimal
          const rows = await ch.query<{ n: string; h: string }>(
            `SELECT count() AS n, toString(sum(cityHash64(${hashed}))) AS h FROM ${quoteIdentifier(t.database)}.${quoteIdentifier(t.name)}${final}`,
          );
          rowsRead = rows[0]?.n ?? "?";
          sums.push(rows[0]?.h ?? "?");
        }
        const rows = [{ n: rowsRead, h: sums.join(",") }];
        out[`${node.name} ${t.database}.${t.name}`] = `${rows[0]?.n ?? "?"}:${rows[0]?.h ?? "?"}`;
      }
    } finally {
      await ch.close();
    }
  }
  return out;
}

export async function readExactWorld(config: StandConfig): Promise<ExactWorld> {
  const guard = await takeWorldSnapshot(config);
  const checksums = await tableChecksums(config);
  const results = await runClickHouseChecks({ expectations: await loadExpectations() });
  const checks = Object.fromEntries(results.map((r) => [r.name, `${r.ok ? "OK" : "RED"} ${r.actual}`]));
  return { guard, checksums, checks };
}

/** Every difference between two exact readings, one line each (the runs and their count aside). */
export function diffExactWorlds(before: ExactWorld, after: ExactWorld): string[] {
  const lines = diffSnapshots(before.guard, after.guard);
  for (const key of ["checksums", "checks"] as const) {
    const a = before[key];
    const b = after[key];
    for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (a[name] !== b[name]) lines.push(`${key} ${name}: ${a[name] ?? "absent"} -> ${b[name] ?? "absent"}`);
    }
  }
  return lines;
}
