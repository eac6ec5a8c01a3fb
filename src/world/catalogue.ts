// The world's catalogue, live and as built: the columns of every table of stg ods dds dm dic on every
// node (system.columns), recorded by world_initialize after its DDL (world.schema_catalogue) and
// compared with the live one by schema status and by world_initialize on a ready position. A report
// never says the schema is in sync without having looked at the servers.
import type pg from "pg";
import { connectClickHouse, quoteString } from "../clickhouse/index.ts";
import { loadStandConfig, type StandConfig } from "../config/index.ts";
import { APPLICATION_DATABASES } from "./constants.ts";

export interface CatalogueColumn {
  node: string;
  database: string;
  table: string;
  column: string;
  type: string;
}

export type CatalogueDriftKind = "missing_database" | "missing_table" | "missing_column" | "changed_type";

export interface CatalogueDrift {
  kind: CatalogueDriftKind;
  node: string;
  /** db, db.table or db.table.column */
  name: string;
  detail: string;
}

export interface LiveCatalogue {
  columns: CatalogueColumn[];
  /** Databases present per node (a database with no tables has no columns). */
  databases: Record<string, string[]>;
  /** Nodes that could not be read, with the reason: nothing about them is known. */
  unreachable: Record<string, string>;
}

/** Reads system.columns and system.databases of every node as `reader`. */
export async function readLiveCatalogue(config: StandConfig = loadStandConfig(), timeoutMs = 10_000): Promise<LiveCatalogue> {
  const live: LiveCatalogue = { columns: [], databases: {}, unreachable: {} };
  const dbList = APPLICATION_DATABASES.map(quoteString).join(", ");
  await Promise.all(
    config.clickhouse.nodes.map(async (node) => {
      const ch = connectClickHouse({ node: node.name, account: "reader", config, requestTimeoutMs: timeoutMs });
      try {
        const dbs = await ch.query<{ name: string }>(`SELECT name FROM system.databases WHERE name IN (${dbList}) ORDER BY name`);
        live.databases[node.name] = dbs.map((d) => d.name);
        const cols = await ch.query<{ database: string; table: string; name: string; type: string }>(
          `SELECT database, table, name, type FROM system.columns WHERE database IN (${dbList}) ORDER BY database, table, name`,
        );
        for (const c of cols) live.columns.push({ node: node.name, database: c.database, table: c.table, column: c.name, type: c.type });
      } catch (err) {
        live.unreachable[node.name] = err instanceof Error ? err.message : String(err);
      } finally {
        await ch.close();
      }
    }),
  );
  return live;
}

/**
 * Pure: what of the built catalogue the live one lacks. Without a recorded catalogue (a world built
 * before it was recorded), only the world's databases on every node are expected.
 */
export function compareCatalogue(built: readonly CatalogueColumn[], live: LiveCatalogue, nodes: readonly string[]): CatalogueDrift[] {
  const drift: CatalogueDrift[] = [];
  const liveCols = new Map(live.columns.map((c) => [`${c.node} ${c.database}.${c.table}.${c.column}`, c.type]));
  const liveTables = new Set(live.columns.map((c) => `${c.node} ${c.database}.${c.table}`));
  const expectedDbs = built.length > 0 ? [...new Set(built.map((c) => c.database))] : [...APPLICATION_DATABASES];
  const missingDbs = new Set<string>();
  for (const node of nodes) {
    if (live.unreachable[node] !== undefined) continue;
    const present = new Set(live.databases[node] ?? []);
    for (const db of expectedDbs.sort()) {
      if (present.has(db)) continue;
      missingDbs.add(`${node} ${db}`);
      drift.push({ kind: "missing_database", node, name: db, detail: `database ${db} is missing on ${node}` });
    }
  }
  const reported = new Set<string>();
  for (const c of built) {
    if (live.unreachable[c.node] !== undefined || missingDbs.has(`${c.node} ${c.database}`)) continue;
    const table = `${c.node} ${c.database}.${c.table}`;
    if (!liveTables.has(table)) {
      if (!reported.has(table)) drift.push({ kind: "missing_table", node: c.node, name: `${c.database}.${c.table}`, detail: `table ${c.database}.${c.table} is missing on ${c.node}` });
      reported.add(table);
      continue;
    }
    const type = liveCols.get(`${c.node} ${c.database}.${c.table}.${c.column}`);
    const name = `${c.database}.${c.table}.${c.column}`;
    if (type === undefined) drift.push({ kind: "missing_column", node: c.node, name, detail: `column ${name} is missing on ${c.node}` });
    else if (type !== c.type) drift.push({ kind: "changed_type", node: c.node, name, detail: `column ${name} on ${c.node} is ${type}, built as ${c.type}` });
  }
  return drift;
}

const INSERT = `insert into world.schema_catalogue (run_id, node, database, table_name, column_name, column_type)
                select $1, x.node, x.database, x.table_name, x.column_name, x.column_type
                  from jsonb_to_recordset($2::jsonb) as x(node text, database text, table_name text, column_name text, column_type text)`;

// the catalogue recorded by the latest run that recorded one
const LATEST = `
  with latest_run as (select run_id from world.schema_catalogue order by recorded_at desc, id desc limit 1)
  select c.node, c.database, c.table_name, c.column_name, c.column_type, c.run_id
    from world.schema_catalogue c join latest_run r on r.run_id = c.run_id
   order by c.node, c.database, c.table_name, c.column_name`;

/** Records the run's catalogue; a retried try replaces what an earlier try of the same run wrote. */
export async function recordCatalogue(db: pg.Client, runId: string, columns: readonly CatalogueColumn[]): Promise<void> {
  const rows = columns.map((c) => ({ node: c.node, database: c.database, table_name: c.table, column_name: c.column, column_type: c.type }));
  await db.query("begin");
  try {
    await db.query("delete from world.schema_catalogue where run_id = $1", [runId]);
    await db.query(INSERT, [runId, JSON.stringify(rows)]);
    await db.query("commit");
  } catch (err) {
    await db.query("rollback").catch(() => undefined);
    throw err;
  }
}

export interface BuiltCatalogue {
  runId: string | null;
  columns: CatalogueColumn[];
}

export async function readBuiltCatalogue(db: pg.Pool | pg.Client): Promise<BuiltCatalogue> {
  const { rows } = await db.query<{ node: string; database: string; table_name: string; column_name: string; column_type: string; run_id: string }>(LATEST);
  return {
    runId: rows[0]?.run_id ?? null,
    columns: rows.map((r) => ({ node: r.node, database: r.database, table: r.table_name, column: r.column_name, type: r.column_type })),
  };
}

export interface CatalogueCheck {
  /** The run that recorded the built catalogue; null for a world built before it was recorded. */
  recordedByRun: string | null;
  nodesChecked: string[];
  /** Nodes that did not answer: nothing is claimed about them. */
  unreachable: Record<string, string>;
  missing: CatalogueDrift[];
}

/** The built catalogue (from `db`, the runner database) against the live one of every node. */
export async function checkCatalogue(db: pg.Pool | pg.Client, config: StandConfig = loadStandConfig()): Promise<CatalogueCheck> {
  const [built, live] = await Promise.all([readBuiltCatalogue(db), readLiveCatalogue(config)]);
  const nodes = config.clickhouse.nodes.map((n) => n.name);
  return {
    recordedByRun: built.runId,
    nodesChecked: nodes.filter((n) => live.unreachable[n] === undefined),
    unreachable: live.unreachable,
    missing: compareCatalogue(built.columns, live, nodes),
  };
}

/** One line for a log or an error: how many items are gone, and the first few. */
export function describeCatalogueDrift(drift: readonly CatalogueDrift[], shown = 5): string {
  const head = drift.slice(0, shown).map((d) => d.detail).join("; ");
  return drift.length > shown ? `${head}; … ${drift.length - shown} more` : head;
}
