// Airflow's jobs: each runner process (its row in runner.heartbeats) as a SchedulerJob, since every
// runner here schedules, runs tasks and parses. Alive while it beats within the health threshold
// (the same one /monitor/health uses); stopped cleanly (stopped_at) is success; stopped beating
// without a word (killed) is failed.
import type pg from "pg";
import type { Engine } from "./engine.ts";
import { heartbeatIntervalMs } from "./leases.ts";
import { orderBy, pageTotal, type Range, type SortKey, Where } from "./list-sql.ts";
import type { Page } from "./types.ts";

export const JOB_SORT_FIELDS = ["id", "dag_id", "state", "job_type", "start_date", "end_date", "latest_heartbeat", "executor_class", "hostname", "unixname"] as const;
export type JobSortField = (typeof JOB_SORT_FIELDS)[number];
export const JOB_TYPE = "SchedulerJob";

export interface JobRecord {
  id: number;
  workerId: string;
  state: "running" | "success" | "failed";
  startDate: Date;
  endDate: Date | null;
  latestHeartbeat: Date;
  hostname: string;
  pid: number;
  alive: boolean;
}

export interface JobListQuery {
  alive?: boolean;
  startDate?: Range<Date>;
  endDate?: Range<Date>;
  states?: readonly string[];
  jobType?: string;
  hostname?: string;
  /** A filter no job here can meet (an executor class): nothing matches. */
  matchNone?: boolean;
  limit: number;
  offset: number;
  orderBy: readonly SortKey<JobSortField>[];
}

/** The health threshold: a runner that has not beaten for this long is not alive. */
export function aliveThresholdMs(leaseSeconds: number): number {
  return Math.max(30_000, 3 * heartbeatIntervalMs(leaseSeconds));
}

export async function markStopped(engine: Engine): Promise<void> {
  await engine.pool.query("update runner.heartbeats set stopped_at = clock_timestamp() where worker_id = $1", [engine.workerId]);
}

export async function readJobs(pool: pg.Pool, leaseSeconds: number, q: JobListQuery): Promise<Page<JobRecord>> {
  const w = new Where();
  const threshold = w.param(aliveThresholdMs(leaseSeconds));
  const alive = `(h.stopped_at is null and h.last_beat_at > clock_timestamp() - make_interval(secs => ${threshold}::double precision / 1000))`;
  const state = `case when h.stopped_at is not null then 'success' when ${alive} then 'running' else 'failed' end`;
  const endDate = `case when ${alive} then null else coalesce(h.stopped_at, h.last_beat_at) end`;
  const columns: Record<JobSortField, string> = {
    id: "h.id", dag_id: "null::text", state, job_type: "null::text", start_date: "h.started_at", end_date: endDate,
    latest_heartbeat: "h.last_beat_at", executor_class: "null::text", hostname: "h.hostname", unixname: "null::text",
  };
  if (q.alive !== undefined) w.add(q.alive ? alive : `not ${alive}`);
  w.never(q.matchNone === true || (q.jobType !== undefined && q.jobType !== JOB_TYPE) ? true : undefined)
    .range("h.started_at", q.startDate)
    .range(endDate, q.endDate)
    .anyOf(state, q.states, "text")
    .anyOf("h.hostname", q.hostname === undefined ? undefined : [q.hostname], "text");
  const where = w.toString();
  const order = orderBy(q.orderBy, columns, "h.id", "h.id");
  const { rows } = await pool.query<{ id: string; worker_id: string; state: JobRecord["state"]; started_at: Date; end_date: Date | null; last_beat_at: Date; hostname: string; pid: number; alive: boolean; total: string }>(
    `select h.id, h.worker_id, ${state} as state, h.started_at, ${endDate} as end_date, h.last_beat_at, h.hostname, h.pid, ${alive} as alive,
            count(*) over () as total
       from runner.heartbeats h where ${where} order by ${order} limit ${w.param(q.limit)} offset ${w.param(q.offset)}`,
    w.values,
  );
  const total = await pageTotal(pool, rows, q.offset, `select count(*) as total from runner.heartbeats h where ${where}`, w.values.slice(0, -2));
  return {
    items: rows.map((r) => ({ id: Number(r.id), workerId: r.worker_id, state: r.state, startDate: r.started_at, endDate: r.end_date, latestHeartbeat: r.last_beat_at, hostname: r.hostname, pid: r.pid, alive: r.alive })),
    totalEntries: total,
  };
}
