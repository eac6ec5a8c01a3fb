// The world's facts about ODS, each read by exactly one query (sql/facts/): valid hits per counter
// day and refused hits per day and class. check-clickhouse, the World page, wait_for_ods and the
// step DAGs' wait all count through here, so two readers cannot disagree about what a day holds.
import { readFileSync } from "node:fs";
import path from "node:path";
import { type StandClickHouse, quoteString, registeredSqlFiles, splitSqlStatements, renderTemplate } from "../clickhouse/index.ts";
import { repoRoot } from "../config/index.ts";

export const FACTS_DIR = path.join(repoRoot, "sql", "facts");

/** The one SELECT of a fact file, without its trailing semicolon (read once per process). */
function factStatement(file: string): { name: string; text: string } {
  const name = path.join("sql", "facts", file);
  const statements = splitSqlStatements(readFileSync(path.join(FACTS_DIR, file), "utf8"));
  const [only, ...rest] = statements;
  if (!only || rest.length > 0) throw new Error(`${name} must hold exactly one SELECT statement (it has ${statements.length})`);
  return { name, text: only.text };
}

/** The facts, one file each in sql/facts/; a file there that is not listed is an error at load. */
export const ODS_FACTS = registeredSqlFiles(FACTS_DIR, ["ods-valid-hits-per-date", "ods-refused-hits-per-date"], "an ODS fact");
const [VALID_HITS, REFUSED_HITS] = [factStatement(`${ODS_FACTS[0]}.sql`), factStatement(`${ODS_FACTS[1]}.sql`)];

/** The valid-hits query, for the given counter dates (YYYY-MM-DD) or every date. */
export function odsValidHitsPerDateSql(dates?: readonly string[]): string {
  const filter = dates === undefined ? "1" : dates.length === 0 ? "0" : `EventDate IN (${dates.map(quoteString).join(", ")})`;
  return renderTemplate(VALID_HITS.text, { date_filter: filter }, VALID_HITS.name);
}

export function odsRefusedHitsPerDateSql(): string {
  return renderTemplate(REFUSED_HITS.text, {}, REFUSED_HITS.name);
}

/** Valid hits in ODS per counter date (each hit once); a date without hits is absent. */
export async function readOdsValidHitsPerDate(clickhouse: StandClickHouse, dates?: readonly string[]): Promise<Map<string, number>> {
  const rows = await clickhouse.query<{ d: string; n: string | number }>(odsValidHitsPerDateSql(dates));
  return new Map(rows.map((r) => [r.d, Number(r.n)]));
}

export interface RefusedHits {
  /** The EventDate text the refused hit carried. */
  d: string;
  error_class: string;
  n: number;
}

/** Refused hits in ODS per day and error class (each distinct hit once). */
export async function readOdsRefusedHitsPerDate(clickhouse: StandClickHouse): Promise<RefusedHits[]> {
  const rows = await clickhouse.query<{ d: string; error_class: string; n: string | number }>(odsRefusedHitsPerDateSql());
  return rows.map((r) => ({ d: r.d, error_class: r.error_class, n: Number(r.n) }));
}
