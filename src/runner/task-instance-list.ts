// Task instance lists as Airflow's GET /dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances and POST
// …/taskInstances/list serve them: one run, every run of a DAG, or every run (`~`), with Airflow's
// filters and several sort keys. Each item comes with its run (the response carries the run's
// logical date, run_after and version).
import type pg from "pg";
import type { Queryable } from "./db.ts";
import { orderBy, pageTotal, type Range, type SortKey, Where } from "./list-sql.ts";
import { runColumns, TASK_INSTANCE_COLUMNS, type RunRow, type TaskInstanceRow, toRunRecord, toTaskInstanceRecord } from "./read-models.ts";
import type { DagRunRecord, Page, TaskInstanceRecord, TaskState } from "./types.ts";

export const TASK_INSTANCE_SORT_FIELDS = [
  "id", "state", "duration", "start_date", "end_date", "map_index", "try_number", "logical_date", "run_after",
  "data_interval_start", "data_interval_end", "rendered_map_index", "operator",
] as const;
export type TaskInstanceSortField = (typeof TASK_INSTANCE_SORT_FIELDS)[number];

const DURATION = "extract(epoch from ti.end_date - ti.start_date)";
/** Task instances keep no updated_at: the latest time they moved (queued, started, ended). */
const UPDATED_AT = "greatest(ti.queued_at, ti.start_date, ti.end_date)";

const SORT_COLUMNS: Record<TaskInstanceSortField, string> = {
  id: "ti.id",
  state: "ti.state",
  duration: DURATION,
  start_date: "ti.start_date",
  end_date: "ti.end_date",
  try_number: "ti.try_number",
  logical_date: "r.logical_date",
  run_after: "r.queued_at",
  // not mapped, no data intervals, no operator classes here: the same for every task instance
  map_index: "(-1)::integer", // a bare -1 would be an ORDER BY position
  data_interval_start: "null::timestamptz",
  data_interval_end: "null::timestamptz",
  rendered_map_index: "null::text",
  operator: "null::text",
};

export interface TaskInstanceListQuery {
  /** null: every DAG (`~`). */
  dagIds: readonly string[] | null;
  /** null: every run (`~`). */
  runIds: readonly string[] | null;
  taskIds?: readonly string[];
  limit: number;
  offset: number;
  /** A filter on what no task instance here has (an executor, an operator, a task group, a rendered map index): nothing matches. */
  matchNone?: boolean;
  states?: readonly TaskState[];
  runAfter?: Range<Date>;
  logicalDate?: Range<Date>;
  startDate?: Range<Date>;
  endDate?: Range<Date>;
  updatedAt?: Range<Date>;
  duration?: Range<number>;
  tryNumbers?: readonly number[];
  versionNumbers?: readonly number[];
  taskIdPattern?: string;
  taskIdPrefix?: string;
  dagIdPattern?: string;
  dagIdPrefix?: string;
  runIdPattern?: string;
  runIdPrefix?: string;
  /** Empty: by run, then the run's manifest order. */
  orderBy: readonly SortKey<TaskInstanceSortField>[];
}

export interface ListedTaskInstance {
  ti: TaskInstanceRecord;
  run: DagRunRecord;
}

function whereOf(q: TaskInstanceListQuery): Where {
  const w = new Where();
  if (q.dagIds !== null) w.anyOf("r.dag_id", q.dagIds, "text");
  if (q.runIds !== null) w.anyOf("r.run_id", q.runIds, "text");
  w.never(q.matchNone === true ? true : undefined)
    .anyOf("ti.task_id", q.taskIds, "text")
    .anyOf("ti.state", q.states, "text")
    .anyOf("ti.try_number", q.tryNumbers, "integer")
    .range("r.queued_at", q.runAfter)
    .range("r.logical_date", q.logicalDate)
    .range("ti.start_date", q.startDate)
    .range("ti.end_date", q.endDate)
    .range(UPDATED_AT, q.updatedAt)
    .range(DURATION, q.duration)
    .pattern("ti.task_id", q.taskIdPattern)
    .prefix("ti.task_id", q.taskIdPrefix)
    .pattern("r.dag_id", q.dagIdPattern)
    .prefix("r.dag_id", q.dagIdPrefix)
    .pattern("r.run_id", q.runIdPattern)
    .prefix("r.run_id", q.runIdPrefix);
  if (q.versionNumbers !== undefined) {
    w.add(`exists (select 1 from runner.dag_versions v where v.id = r.dag_version_id and v.version_number = any(${w.param(q.versionNumbers)}::integer[]))`);
  }
  return w;
}

export async function readTaskInstanceList(db: Queryable | pg.Pool, q: TaskInstanceListQuery): Promise<Page<ListedTaskInstance>> {
  const w = whereOf(q);
  const where = w.toString();
  const order = orderBy(q.orderBy, SORT_COLUMNS, "ti.id", "r.id, array_position(r.manifest, ti.task_id), ti.task_id");
  const limit = w.param(q.limit);
  const offset = w.param(q.offset);
  const from = "runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk";
  const page = await db.query<TaskInstanceRow & { run_pk: number; total: string }>(
    `select ${TASK_INSTANCE_COLUMNS}, ti.run_pk, count(*) over () as total from ${from} where ${where} order by ${order} limit ${limit} offset ${offset}`,
    w.values,
  );
  const total = await pageTotal(db, page.rows, q.offset, `select count(*) as total from ${from} where ${where}`, w.values.slice(0, -2));
  const runPks = [...new Set(page.rows.map((r) => r.run_pk))];
  const runs = new Map<number, DagRunRecord>();
  if (runPks.length > 0) {
    const rows = await db.query<RunRow>(`select ${runColumns("r")} from runner.dag_runs r where r.id = any($1::bigint[])`, [runPks]);
    for (const row of rows.rows) runs.set(Number(row.id), toRunRecord(row));
  }
  const items = page.rows.flatMap((row) => {
    const run = runs.get(Number(row.run_pk));
    return run ? [{ ti: toTaskInstanceRecord(run.dagId, run.runId, row), run }] : [];
  });
  return { items, totalEntries: total };
}
