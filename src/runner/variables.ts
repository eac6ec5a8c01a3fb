// Variables: a key/value store in Postgres. Writes go through runner.set_variable /
// runner.delete_variable, which record every change (old, new, when, who, which run).
import { type Queryable, query, queryOne, statement } from "./db.ts";
import { orderBy, pageTotal, type SortKey, Where } from "./list-sql.ts";
import { VariableNotFoundError } from "./errors.ts";
import type { Page, VariableChange, VariableRecord } from "./types.ts";

interface VariableRow {
  key: string;
  value: string;
  description: string | null;
  updated_at: Date;
}

interface HistoryRow {
  key: string;
  old_value: string | null;
  new_value: string | null;
  changed_at: Date;
  changed_by: string;
  dag_id: string | null;
  run_id: string | null;
}

/** Who changed a variable, and from which run when a task did. */
export interface ChangeAuthor {
  changedBy: string;
  dagId?: string | null;
  runId?: string | null;
}

const GET = statement("variable_get", "select key, value, description, updated_at from runner.variables where key = $1");
const SET = statement("variable_set", "select * from runner.set_variable($1, $2, $3, $4, $5, $6, $7)");
const DELETE = statement("variable_delete", "select runner.delete_variable($1, $2, $3, $4) as deleted");
const HISTORY = statement(
  "variable_history",
  `select key, old_value, new_value, changed_at, changed_by, dag_id, run_id
     from runner.variable_history where key = $1 order by id`,
);

function toRecord(row: VariableRow): VariableRecord {
  return { key: row.key, value: row.value, description: row.description, updatedAt: row.updated_at };
}

export async function getVariable(db: Queryable, key: string): Promise<VariableRecord | null> {
  const row = await queryOne<VariableRow>(db, GET, [key]);
  return row ? toRecord(row) : null;
}

/** Airflow's sort keys of get_variables: `id` is the key here (variables have no other id), `_val`
 * the value; every variable is unencrypted and of no team, so those two keep the key's order. */
export const VARIABLE_SORT_FIELDS = ["key", "id", "_val", "value", "description", "is_encrypted", "team_name"] as const;
export type VariableSortField = (typeof VARIABLE_SORT_FIELDS)[number];
const SORT_COLUMNS: Record<VariableSortField, string> = {
  key: "key", id: "key", _val: "value", value: "value", description: "description", is_encrypted: "false", team_name: "null::text",
};

export interface VariableListQuery {
  limit: number;
  offset: number;
  orderBy?: readonly SortKey<VariableSortField>[];
  /** Airflow's variable_key_pattern (ILIKE substring, | for or) and variable_key_prefix_pattern. */
  pattern?: string;
  prefix?: string;
}

export async function listVariables(db: Queryable, q: VariableListQuery): Promise<Page<VariableRecord>> {
  const w = new Where();
  w.pattern("key", q.pattern).prefix("key", q.prefix);
  const where = w.toString();
  const order = orderBy(q.orderBy ?? [], SORT_COLUMNS, "key", "key");
  const limit = w.param(q.limit);
  const offset = w.param(q.offset);
  const page = await db.query<VariableRow & { total: string }>(
    `select key, value, description, updated_at, count(*) over () as total from runner.variables where ${where} order by ${order} limit ${limit} offset ${offset}`,
    w.values,
  );
  const total = await pageTotal(db, page.rows, q.offset, `select count(*) as total from runner.variables where ${where}`, w.values.slice(0, -2));
  return { items: page.rows.map(toRecord), totalEntries: total };
}

/** description: undefined keeps the current one, null clears it. */
export async function setVariable(
  db: Queryable,
  key: string,
  value: string,
  author: ChangeAuthor,
  description?: string | null,
): Promise<VariableRecord> {
  const row = await queryOne<VariableRow>(db, SET, [
    key,
    value,
    description ?? null,
    description !== undefined,
    author.changedBy,
    author.dagId ?? null,
    author.runId ?? null,
  ]);
  if (!row) throw new Error(`set_variable returned nothing for '${key}'`);
  return toRecord(row);
}

/** Throws VariableNotFoundError when there is no such variable. */
export async function deleteVariable(db: Queryable, key: string, author: ChangeAuthor): Promise<void> {
  const row = await queryOne<{ deleted: boolean }>(db, DELETE, [key, author.changedBy, author.dagId ?? null, author.runId ?? null]);
  if (!row?.deleted) throw new VariableNotFoundError(key);
}

/** Every recorded change of a key, oldest first. */
export async function variableHistory(db: Queryable, key: string): Promise<VariableChange[]> {
  const rows = await query<HistoryRow>(db, HISTORY, [key]);
  return rows.map((row) => ({
    key: row.key,
    oldValue: row.old_value,
    newValue: row.new_value,
    changedAt: row.changed_at,
    changedBy: row.changed_by,
    dagId: row.dag_id,
    runId: row.run_id,
  }));
}
