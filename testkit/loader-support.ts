// Shared pieces of the loader tests: a seeded random source (so a failing interleaving can be
// replayed from its seed), fake ClickHouse errors carrying real server codes, and the world's landing
// columns for a test table.
import { readFileSync } from "node:fs";

/** mulberry32: a small, fast, seeded PRNG returning [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomInt(random: () => number, below: number): number {
  return Math.floor(random() * below);
}

/** An error shaped like @clickhouse/client's ClickHouseError for a server code. */
export function serverError(code: number): Error {
  return Object.assign(new Error(`Code: ${code}, e.displayText() = DB::Exception: fake`), { code: String(code) });
}

/** The world's landing columns (sql/ddl/90-hits-ingest.sql's stg.hits_in) as a MergeTree table of a test's own, so rows can be read back. */
export function worldLandingDdl(table: string, orderBy = "tuple()"): string {
  const ddl = readFileSync(new URL("../sql/ddl/90-hits-ingest.sql", import.meta.url), "utf8");
  const columns = /CREATE TABLE IF NOT EXISTS stg\.hits_in ON CLUSTER \{\{cluster\}\}\n(\([\s\S]*?\n\))\nENGINE = Null;/.exec(ddl)?.[1];
  if (columns === undefined) throw new Error("90-hits-ingest.sql: no stg.hits_in column list");
  return `CREATE TABLE ${table}\n${columns}\nENGINE = MergeTree ORDER BY ${orderBy}`;
}
