// XCom entries (Airflow's cross-task values): pushed by a task's context during its try, read by
// the tasks after it (pull), listed and edited through the API. A row belongs to a task instance's
// try; only the current try's rows are visible (migration 000024), so a retry or a clear starts
// with none. Values are JSON; keys are Airflow's (return_value is what `wait …?result=` collects).
import type pg from "pg";
import type { Queryable } from "./db.ts";
import { DagRunNotFoundError, TaskInstanceNotFoundError, XComExistsError, XComNotFoundError, XComTooLargeError } from "./errors.ts";
import { orderBy, pageTotal, type Range, type SortKey, Where } from "./list-sql.ts";
import type { JsonValue, Page } from "./types.ts";

/** Airflow's key for a task's return value. */
export const RETURN_VALUE_KEY = "return_value";
/** A pushed value's size limit, serialized: XCom is for small values (Airflow keeps them in its database too). */
export const XCOM_MAX_BYTES = 512 * 1024;

export const XCOM_SORT_FIELDS = ["key", "dag_id", "run_id", "task_id", "map_index", "timestamp", "run_after"] as const;
export type XComSortField = (typeof XCOM_SORT_FIELDS)[number];

const SORT_COLUMNS: Record<XComSortField, string> = {
  key: "x.key",
  dag_id: "r.dag_id",
  run_id: "r.run_id",
  task_id: "ti.task_id",
  map_index: "(-1)::integer", // a bare -1 would be an ORDER BY position
  timestamp: "x.updated_at",
  run_after: "r.queued_at",
};
const DEFAULT_ORDER = "r.dag_id, ti.task_id, r.run_id, x.key";

export interface XComRecord {
  dagId: string;
  runId: string;
  taskId: string;
  key: string;
  value: JsonValue;
  timestamp: Date;
  logicalDate: Date | null;
  runAfter: Date;
}

export interface XComListQuery {
  /** null: every DAG, run, task (`~`). */
  dagId: string | null;
  runId: string | null;
  taskId: string | null;
  key?: string;
  keyPattern?: string;
  keyPrefix?: string;
  dagIdPattern?: string;
  dagIdPrefix?: string;
  runIdPattern?: string;
  runIdPrefix?: string;
  taskIdPattern?: string;
  taskIdPrefix?: string;
  logicalDate?: Range<Date>;
  runAfter?: Range<Date>;
  /** A map index other than -1: nothing matches (no task here is mapped). */
  matchNone?: boolean;
  limit: number;
  offset: number;
  orderBy: readonly SortKey<XComSortField>[];
}

interface XComRow {
  dag_id: string;
  run_id: string;
  task_id: string;
  key: string;
  value: JsonValue;
  updated_at: Date;
  logical_date: Date | null;
  queued_at: Date;
}

const COLUMNS = "r.dag_id, r.run_id, ti.task_id, x.key, x.value, x.updated_at, r.logical_date, r.queued_at";
/** Only the current try's rows: the join on try_number hides what a retry or a clear left behind. */
const FROM =
  "runner.xcom x join runner.task_instances ti on ti.id = x.ti_id and x.try_number = ti.try_number join runner.dag_runs r on r.id = ti.run_pk";

function toRecord(row: XComRow): XComRecord {
  return {
    dagId: row.dag_id,
    runId: row.run_id,
    taskId: row.task_id,
    key: row.key,
    value: row.value,
    timestamp: row.updated_at,
    logicalDate: row.logical_date,
    runAfter: row.queued_at,
  };
}

/** The JSON text of a value, refused when it is too big for XCom. */
export function xcomJson(value: JsonValue, where: string): string {
  let text: string | undefined;
  try {
    // undefined for undefined, a function or a symbol, whatever the type says
    text = JSON.stringify(value);
  } catch (err) {
    throw new TypeError(`${where}: the value is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (text === undefined) throw new TypeError(`${where}: the value is not JSON (undefined, a function or a symbol)`);
  if (Buffer.byteLength(text) > XCOM_MAX_BYTES) {
    throw new XComTooLargeError(where, Buffer.byteLength(text), XCOM_MAX_BYTES);
  }
  return text;
}

/** Writes a key for a try (a task's push: the caller has proven the try still holds the task). */
export async function pushXCom(db: Queryable, tiId: number, tryNumber: number, key: string, json: string): Promise<void> {
  await db.query(
    `insert into runner.xcom (ti_id, try_number, key, value) values ($1, $2, $3, $4::jsonb)
     on conflict (ti_id, try_number, key) do update set value = excluded.value, updated_at = clock_timestamp()`,
    [tiId, tryNumber, key, json],
  );
}

/** A value pushed by a task of the puller's run (its current try); undefined when there is none. */
export async function pullXCom(db: Queryable | pg.Pool, pullerTiId: number, taskId: string, key: string): Promise<JsonValue | undefined> {
  const { rows } = await db.query<{ value: JsonValue }>(
    `select x.value from runner.xcom x join runner.task_instances ti on ti.id = x.ti_id and x.try_number = ti.try_number
      where ti.run_pk = (select run_pk from runner.task_instances where id = $1) and ti.task_id = $2 and x.key = $3`,
    [pullerTiId, taskId, key],
  );
  return rows[0]?.value;
}

export async function readXComs(db: Queryable | pg.Pool, q: XComListQuery): Promise<Page<XComRecord>> {
  const w = new Where();
  if (q.dagId !== null) w.anyOf("r.dag_id", [q.dagId], "text");
  if (q.runId !== null) w.anyOf("r.run_id", [q.runId], "text");
  if (q.taskId !== null) w.anyOf("ti.task_id", [q.taskId], "text");
  w.never(q.matchNone === true ? true : undefined)
    .anyOf("x.key", q.key === undefined ? undefined : [q.key], "text")
    .pattern("x.key", q.keyPattern)
    .prefix("x.key", q.keyPrefix)
    .pattern("r.dag_id", q.dagIdPattern)
    .prefix("r.dag_id", q.dagIdPrefix)
    .pattern("r.run_id", q.runIdPattern)
    .prefix("r.run_id", q.runIdPrefix)
    .pattern("ti.task_id", q.taskIdPattern)
    .prefix("ti.task_id", q.taskIdPrefix)
    .range("r.logical_date", q.logicalDate)
    .range("r.queued_at", q.runAfter);
  const where = w.toString();
  const order = orderBy(q.orderBy, SORT_COLUMNS, "x.ti_id, x.key", DEFAULT_ORDER);
  const { rows } = await db.query<XComRow & { total: string }>(
    `select ${COLUMNS}, count(*) over () as total from ${FROM} where ${where} order by ${order} limit ${w.param(q.limit)} offset ${w.param(q.offset)}`,
    w.values,
  );
  const total = await pageTotal(db, rows, q.offset, `select count(*) as total from ${FROM} where ${where}`, w.values.slice(0, -2));
  return { items: rows.map(toRecord), totalEntries: total };
}

export async function readXCom(db: Queryable | pg.Pool, dagId: string, runId: string, taskId: string, key: string): Promise<XComRecord> {
  const { rows } = await db.query<XComRow>(`select ${COLUMNS} from ${FROM} where r.dag_id = $1 and r.run_id = $2 and ti.task_id = $3 and x.key = $4`, [dagId, runId, taskId, key]);
  const row = rows[0];
  if (!row) {
    await taskInstanceOf(db, dagId, runId, taskId); // 404 names what is missing: the run, the task or the key
    throw new XComNotFoundError(dagId, runId, taskId, key);
  }
  return toRecord(row);
}

async function taskInstanceOf(db: Queryable | pg.Pool, dagId: string, runId: string, taskId: string): Promise<{ id: number; try_number: number }> {
  const { rows } = await db.query<{ run_pk: string; ti_id: string | null; try_number: number | null }>(
    `select r.id as run_pk, ti.id as ti_id, ti.try_number
       from runner.dag_runs r left join runner.task_instances ti on ti.run_pk = r.id and ti.task_id = $3
      where r.dag_id = $1 and r.run_id = $2`,
    [dagId, runId, taskId],
  );
  const row = rows[0];
  if (!row) throw new DagRunNotFoundError(dagId, runId);
  if (row.ti_id === null || row.try_number === null) throw new TaskInstanceNotFoundError(dagId, runId, taskId);
  return { id: Number(row.ti_id), try_number: row.try_number };
}

/** An operator's entry (POST): on the task instance's current try; 409 when the key is there. */
export async function createXCom(db: pg.Pool, dagId: string, runId: string, taskId: string, key: string, value: JsonValue): Promise<XComRecord> {
  const ti = await taskInstanceOf(db, dagId, runId, taskId);
  const json = xcomJson(value, `XCom '${key}' of ${dagId}/${runId}/${taskId}`);
  const { rowCount } = await db.query(
    "insert into runner.xcom (ti_id, try_number, key, value) values ($1, $2, $3, $4::jsonb) on conflict do nothing",
    [ti.id, ti.try_number, key, json],
  );
  if (rowCount === 0) throw new XComExistsError(dagId, runId, taskId, key);
  return readXCom(db, dagId, runId, taskId, key);
}

/** PATCH: a new value for a visible entry; 404 when there is none. */
export async function updateXCom(db: pg.Pool, dagId: string, runId: string, taskId: string, key: string, value: JsonValue): Promise<XComRecord> {
  const ti = await taskInstanceOf(db, dagId, runId, taskId);
  const json = xcomJson(value, `XCom '${key}' of ${dagId}/${runId}/${taskId}`);
  const { rowCount } = await db.query(
    "update runner.xcom set value = $4::jsonb, updated_at = clock_timestamp() where ti_id = $1 and try_number = $2 and key = $3",
    [ti.id, ti.try_number, key, json],
  );
  if (rowCount === 0) throw new XComNotFoundError(dagId, runId, taskId, key);
  return readXCom(db, dagId, runId, taskId, key);
}

export async function deleteXCom(db: pg.Pool, dagId: string, runId: string, taskId: string, key: string): Promise<void> {
  const ti = await taskInstanceOf(db, dagId, runId, taskId);
  const { rowCount } = await db.query("delete from runner.xcom where ti_id = $1 and try_number = $2 and key = $3", [ti.id, ti.try_number, key]);
  if (rowCount === 0) throw new XComNotFoundError(dagId, runId, taskId, key);
}

/** Each named task's return_value in the run (Airflow's wait `result`); a task without one is left out. */
export async function readReturnValues(db: Queryable | pg.Pool, dagId: string, runId: string, taskIds: readonly string[]): Promise<Record<string, JsonValue>> {
  const { rows } = await db.query<{ task_id: string; value: JsonValue }>(
    `select ti.task_id, x.value from ${FROM} where r.dag_id = $1 and r.run_id = $2 and ti.task_id = any($3::text[]) and x.key = $4`,
    [dagId, runId, taskIds, RETURN_VALUE_KEY],
  );
  return Object.fromEntries(rows.map((r) => [r.task_id, r.value]));
}
