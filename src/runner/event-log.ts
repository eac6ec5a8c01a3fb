// The event log (000021_event_log.sql): recorded by the API and the web view for every change a
// person makes and every login; listed with Airflow's filters (GET /api/v2/eventLogs).
import type pg from "pg";
import { queryOne, statement } from "./db.ts";
import { orderBy, pageTotal, type SortKey, Where } from "./list-sql.ts";
import { RunnerError } from "./errors.ts";
import type { Page } from "./types.ts";

export interface EventRecord {
  id: number;
  when: Date;
  event: string;
  owner: string | null;
  dagId: string | null;
  taskId: string | null;
  runId: string | null;
  tryNumber: number | null;
  logicalDate: Date | null;
  extra: string | null;
}

export type NewEvent = Omit<EventRecord, "id" | "when" | "logicalDate" | "tryNumber"> & { tryNumber?: number | null };

export class EventLogNotFoundError extends RunnerError {
  constructor(readonly id: number) {
    super(`event log entry ${id} does not exist`);
  }
}

export const EVENT_SORT_FIELDS = ["id", "dttm", "dag_id", "task_id", "run_id", "event", "logical_date", "owner", "extra", "when", "event_log_id"] as const;
export type EventSortField = (typeof EVENT_SORT_FIELDS)[number];
const SORT_COLUMNS: Record<EventSortField, string> = {
  id: "e.id", event_log_id: "e.id", dttm: "e.dttm", when: "e.dttm", dag_id: "e.dag_id", task_id: "e.task_id", run_id: "e.run_id",
  event: "e.event", logical_date: "e.logical_date", owner: "e.owner", extra: "e.extra",
};

export interface EventLogQuery {
  limit: number;
  offset: number;
  dagId?: string;
  taskId?: string;
  runId?: string;
  tryNumber?: number;
  owner?: string;
  event?: string;
  includedEvents?: readonly string[];
  excludedEvents?: readonly string[];
  before?: Date;
  after?: Date;
  patterns: { dagId?: string; taskId?: string; runId?: string; owner?: string; event?: string };
  prefixes: { dagId?: string; taskId?: string; runId?: string; owner?: string; event?: string };
  orderBy: readonly SortKey<EventSortField>[];
}

const INSERT = statement(
  "record_event",
  `insert into runner.event_log (event, owner, dag_id, task_id, run_id, try_number, logical_date, extra)
   values ($1, $2, $3, $4, $5, $6, (select logical_date from runner.dag_runs where dag_id = $3 and run_id = $5), $7)`,
);
const COLUMNS = "e.id, e.dttm, e.event, e.owner, e.dag_id, e.task_id, e.run_id, e.try_number, e.logical_date, e.extra";
const ONE = statement("read_event", `select ${COLUMNS} from runner.event_log e where e.id = $1`);

interface Row {
  id: string;
  dttm: Date;
  event: string;
  owner: string | null;
  dag_id: string | null;
  task_id: string | null;
  run_id: string | null;
  try_number: number | null;
  logical_date: Date | null;
  extra: string | null;
}

const toRecord = (r: Row): EventRecord => ({
  id: Number(r.id), when: r.dttm, event: r.event, owner: r.owner, dagId: r.dag_id, taskId: r.task_id, runId: r.run_id,
  tryNumber: r.try_number, logicalDate: r.logical_date, extra: r.extra,
});

export async function recordEvent(db: pg.Pool, e: NewEvent): Promise<void> {
  await queryOne(db, INSERT, [e.event, e.owner, e.dagId, e.taskId, e.runId, e.tryNumber ?? null, e.extra]);
}

export async function readEvent(db: pg.Pool, id: number): Promise<EventRecord> {
  const row = await queryOne<Row>(db, ONE, [id]);
  if (!row) throw new EventLogNotFoundError(id);
  return toRecord(row);
}

export async function readEvents(db: pg.Pool, q: EventLogQuery): Promise<Page<EventRecord>> {
  const w = new Where();
  const eq = (expr: string, value: string | number | undefined) => (value === undefined ? w : w.add(`${expr} = ${w.param(value)}`));
  eq("e.dag_id", q.dagId);
  eq("e.task_id", q.taskId);
  eq("e.run_id", q.runId);
  eq("e.try_number", q.tryNumber);
  eq("e.owner", q.owner);
  eq("e.event", q.event);
  w.anyOf("e.event", q.includedEvents, "text");
  if (q.excludedEvents !== undefined) w.add(`not (e.event = any(${w.param(q.excludedEvents)}::text[]))`);
  w.range("e.dttm", { ...(q.after && { gte: q.after }), ...(q.before && { lte: q.before }) });
  const fields = { dagId: "e.dag_id", taskId: "e.task_id", runId: "e.run_id", owner: "e.owner", event: "e.event" } as const;
  for (const [key, expr] of Object.entries(fields) as [keyof typeof fields, string][]) {
    w.pattern(expr, q.patterns[key]).prefix(expr, q.prefixes[key]);
  }
  const where = w.toString();
  const order = orderBy(q.orderBy, SORT_COLUMNS, "e.id", "e.id");
  const limit = w.param(q.limit);
  const offset = w.param(q.offset);
  const page = await db.query<Row & { total: string }>(`select ${COLUMNS}, count(*) over () as total from runner.event_log e where ${where} order by ${order} limit ${limit} offset ${offset}`, w.values);
  const total = await pageTotal(db, page.rows, q.offset, `select count(*) as total from runner.event_log e where ${where}`, w.values.slice(0, -2));
  return { items: page.rows.map(toRecord), totalEntries: total };
}
