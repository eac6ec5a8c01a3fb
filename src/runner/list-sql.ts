// The filters and sort keys of Airflow's list endpoints as SQL: ranges (gte, gt, lte, lt), any-of
// lists, case-insensitive substring patterns (Airflow's `_pattern`: % and _ stay wildcards) and
// case-sensitive prefixes (`_prefix_pattern`), and several sort keys with `-` for descending. Every
// value is a bind parameter; every column and sort expression comes from the caller's fixed map,
// never from the request.

import type { Queryable } from "./db.ts";

/** Airflow's four bounds of a range filter (`x_gte`, `x_gt`, `x_lte`, `x_lt`). */
export interface Range<T> {
  gte?: T;
  gt?: T;
  lte?: T;
  lt?: T;
}

export interface SortKey<F extends string> {
  field: F;
  descending: boolean;
}

/** Parses Airflow's order_by values ("state", "-start_date"); the caller's schema has checked the names. */
export function sortKeys<F extends string>(values: readonly string[], fields: readonly F[]): SortKey<F>[] {
  return values.flatMap((v) => {
    const descending = v.startsWith("-");
    const name = descending ? v.slice(1) : v;
    const field = fields.find((f) => f === name);
    return field === undefined ? [] : [{ field, descending }];
  });
}

/** A WHERE clause built from filters, with its bind values. */
export class Where {
  private readonly parts: string[] = [];
  readonly values: unknown[] = [];

  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  add(condition: string): this {
    this.parts.push(condition);
    return this;
  }

  anyOf(expr: string, values: readonly unknown[] | undefined, cast: string): this {
    if (values === undefined) return this;
    return this.add(`${expr} = any(${this.param(values)}::${cast}[])`);
  }

  range<T>(expr: string, range: Range<T> | undefined): this {
    if (!range) return this;
    const ops: [keyof Range<T>, string][] = [["gte", ">="], ["gt", ">"], ["lte", "<="], ["lt", "<"]];
    for (const [bound, op] of ops) {
      const value = range[bound];
      if (value !== undefined) this.add(`${expr} ${op} ${this.param(value)}`);
    }
    return this;
  }

  /** Airflow's `_pattern`: a case-insensitive substring; % and _ are wildcards, | separates
   * alternatives, and "~" matches everything (as src/api/airflow-pattern.ts in memory). */
  pattern(expr: string, value: string | undefined): this {
    if (value === undefined || value === "~") return this;
    const alternatives = value.split("|").map((part) => `%${part}%`);
    return this.add(`${expr} ilike any(${this.param(alternatives)}::text[])`);
  }

  /** Airflow's `_prefix_pattern`: a case-sensitive prefix, taken literally; | separates alternatives. */
  prefix(expr: string, value: string | undefined): this {
    if (value === undefined) return this;
    const alternatives = value.split("|").map((part) => `${part.replace(/[\\%_]/g, "\\$&")}%`);
    return this.add(`${expr} like any(${this.param(alternatives)}::text[])`);
  }

  /** A filter on something this runner never has (partitions, assets, bundle versions): given a
   * value, nothing matches, as Airflow's filter on a column that is null in every row. */
  never(given: unknown): this {
    return given === undefined ? this : this.add("false");
  }

  /** A literal substring of a text expression (conf_contains). */
  contains(expr: string, value: string | undefined): this {
    if (value === undefined) return this;
    return this.add(`strpos(${expr}, ${this.param(value)}) > 0`);
  }

  toString(): string {
    return this.parts.length === 0 ? "true" : this.parts.join(" and ");
  }
}

/** ORDER BY for the keys, each by its expression in `columns`, then `tiebreak` (a unique key, so
 * pages never overlap); without keys, `fallback`. */
export function orderBy<F extends string>(keys: readonly SortKey<F>[], columns: Record<F, string>, tiebreak: string, fallback: string): string {
  if (keys.length === 0) return fallback;
  const last = keys[keys.length - 1];
  const parts = keys.map((k) => `${columns[k.field]} ${k.descending ? "desc" : "asc"}`);
  parts.push(`${tiebreak} ${last?.descending === true ? "desc" : "asc"}`);
  return parts.join(", ");
}

/** A page's total_entries from its rows' `count(*) over ()`. Past the last page there are no rows
 * to carry the window count, so it is counted again with `countSql` (`select count(*) as total …`). */
export async function pageTotal(db: Queryable, rows: readonly { total: string }[], offset: number, countSql: string, values: readonly unknown[]): Promise<number> {
  if (rows[0]) return Number(rows[0].total);
  if (offset === 0) return 0;
  const counted = await db.query<{ total: string }>(countSql, [...values]);
  return Number(counted.rows[0]?.total ?? 0);
}
