// An exact reading of the test stand's world, for tests that must tell whether two worlds can be told
// apart (a restore against the save): the world guard's reading (position, rows of every table read
// merged, topic end offsets, committed group offsets) plus, per table and node, a checksum of every
// column of every row read merged (FINAL where merges fold rows), and check-clickhouse's results.
import { connectClickHouse, quoteIdentifier, quoteString } from "../../src/clickhouse/index.ts";
import type { StandConfig } from "../../src/config/index.ts";
import { FOLDING_ENGINE, listWorldTables, takeWorldSnapshot, diffSnapshots, type WorldSnapshot, loadExpectations, runClickHouseChecks } from "../../src/world-ops/index.ts";

export interface ExactWorld {
  guard: WorldSnapshot;
  /** "node db.table" → "rows:checksum", read merged. */
  checksums: Record<string, string>;
  /** check-clickhouse: "name" → "OK actual" or "RED actual". */
  checks: Record<string, string>;
}

/** Every table's checksums on one node. */
async function nodeChecksums(config: StandConfig, node: StandConfig["clickhouse"]["nodes"][number]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const ch = connectClickHouse({ node: node.name, account: "reader", config, requestTimeoutMs: 60_000 });
  try {
    const tables = await listWorldTables(ch);
    for (const t of tables) {
      const columns = await ch.query<{ name: string }>(
        `SELECT name FROM system.columns WHERE database = ${quoteString(t.database)} AND table = ${quoteString(t.name)} ORDER BY name`,
      );
      // 18.16 runs out of memory (1.86 GiB) on FINAL over all ~50 columns of ods.event at 30 days,
      // and fits in eight at a time: one sum per group of columns (a plain read takes them all at once)
      const final = FOLDING_ENGINE.test(t.engine) ? " FINAL" : "";
      const group = final ? 8 : Math.max(1, columns.length);
      const sums: string[] = [];
      let rowsRead = "?";
      for (let i = 0; i < columns.length; i += group) {
        const hashed = columns.slice(i, i + group).map((c) => `cityHash64(toString(${quoteIdentifier(c.name)}))`).join(", "); // toString: 18.16 hashes no Decimal
        const [row] = await ch.query<{ n: string; h: string }>(
          `SELECT count() AS n, toString(sum(cityHash64(${hashed}))) AS h FROM ${quoteIdentifier(t.database)}.${quoteIdentifier(t.name)}${final}`,
        );
        rowsRead = row?.n ?? "?";
        sums.push(row?.h ?? "?");
      }
      out[`${node.name} ${t.database}.${t.name}`] = `${rowsRead}:${sums.join(",")}`;
    }
  } finally {
    await ch.close();
  }
  return out;
}

/** The reading's parts are independent reads of a quiet world: taken side by side (the nodes too). */
export async function readExactWorld(config: StandConfig): Promise<ExactWorld> {
  const [guard, perNode, results] = await Promise.all([
    takeWorldSnapshot(config),
    Promise.all(config.clickhouse.nodes.map((node) => nodeChecksums(config, node))),
    loadExpectations().then((expectations) => runClickHouseChecks({ expectations, config })),
  ]);
  const checksums = Object.assign({}, ...perNode) as Record<string, string>;
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
