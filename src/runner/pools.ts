// Airflow's pools on this runner's model: default_pool is the task slots of the runners alive
// (runner.worker_concurrency each), and each exclusive resource a DAG declares (the world) is a pool
// of one slot: occupied by the run that holds it, with the runs queued behind it. Both come from the
// runner's configuration and DAGs, so they are read here and never written through the API.
import type pg from "pg";
import { aliveThresholdMs } from "./jobs.ts";

export interface PoolRecord {
  name: string;
  slots: number;
  description: string;
  occupied: number;
  running: number;
  queued: number;
  deferred: number;
}

export const DEFAULT_POOL = "default_pool";

export async function readPools(pool: pg.Pool, concurrency: number, leaseSeconds: number): Promise<PoolRecord[]> {
  const [tasks, resources] = await Promise.all([
    pool.query<{ running: string; queued: string; deferred: string; runners: string }>(
      `select count(*) filter (where state = 'running') as running, count(*) filter (where state = 'queued') as queued,
              count(*) filter (where state = 'deferred') as deferred,
              (select count(*) from runner.heartbeats where stopped_at is null
                  and last_beat_at > clock_timestamp() - make_interval(secs => $1::double precision / 1000)) as runners
         from runner.task_instances where state in ('running', 'queued', 'deferred')`,
      [aliveThresholdMs(leaseSeconds)],
    ),
    pool.query<{ resource: string; holder: string | null; since: Date | null; waiting: string[] }>(
      `with names as (select distinct unnest(exclusive) as resource from runner.dags
                      union select resource from runner.resource_holds)
       select n.resource, r.dag_id || '/' || r.run_id as holder, h.taken_at as since,
              coalesce((select array_agg(w.dag_id || '/' || w.run_id order by w.queued_at, w.id) from runner.dag_runs w
                         where w.state = 'queued' and w.waiting_for like n.resource || ' held by %'), '{}') as waiting
         from names n left join runner.resource_holds h on h.resource = n.resource left join runner.dag_runs r on r.id = h.run_pk
        order by n.resource`,
    ),
  ]);
  const t = tasks.rows[0];
  const runners = Math.max(1, Number(t?.runners ?? 0));
  const defaultPool: PoolRecord = {
    name: DEFAULT_POOL,
    slots: concurrency * runners,
    description: `the task slots of the ${runners} runner${runners === 1 ? "" : "s"} alive (runner.worker_concurrency ${concurrency} each)`,
    occupied: Number(t?.running ?? 0),
    running: Number(t?.running ?? 0),
    queued: Number(t?.queued ?? 0),
    deferred: Number(t?.deferred ?? 0),
  };
  const exclusive = resources.rows.map((r): PoolRecord => {
    const queue = r.waiting.length === 0 ? "no run waits for it" : `waiting: ${r.waiting.slice(0, 10).join(", ")}${r.waiting.length > 10 ? ` and ${r.waiting.length - 10} more` : ""}`;
    return {
      name: r.resource,
      slots: 1,
      description: `exclusive resource: ${r.holder === null ? "free" : `held by ${r.holder} since ${r.since?.toISOString() ?? "?"}`}; ${queue}`,
      occupied: r.holder === null ? 0 : 1,
      running: r.holder === null ? 0 : 1,
      queued: r.waiting.length,
      deferred: 0,
    };
  });
  return [defaultPool, ...exclusive];
}
