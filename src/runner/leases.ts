// Crash takeover. The heartbeat renews the lease of every try this process runs (and flushes
// their log lines, and records that the process is alive); the reaper, in every runner process,
// takes over tries whose lease lapsed: the try is lost, the task retried or failed, and
// graphile-worker's lock on the dead job cleared, all within the lease rather than 4 hours.
import os from "node:os";
import { query, statement } from "./db.ts";
import type { Engine } from "./engine.ts";
import { LeaseLostError } from "./errors.ts";
import { appendLogLines, findExpiredLeases, renewLeases, resumeDeferredTask, takeOverLostTry } from "./task-tries.ts";

const BEAT = statement(
  "process_heartbeat",
  `insert into runner.heartbeats (worker_id, hostname, pid, graphile_worker_ids) values ($1, $2, $3, $4)
   on conflict (worker_id) do update
      set last_beat_at = clock_timestamp(), graphile_worker_ids = excluded.graphile_worker_ids`,
);
// deferred waiting triggers whose child ended a lease ago without the resume job resuming them
const UNRESUMED = statement(
  "unresumed_deferred",
  `select ti.id, ti.child_run_pk, ti.task_id, ti.try_number, ti.max_tries, r.dag_id
     from runner.task_instances ti
     join runner.dag_runs c on c.id = ti.child_run_pk
     join runner.dag_runs r on r.id = ti.run_pk
    where ti.state = 'deferred' and c.state in ('success', 'failed')
      and c.end_date < clock_timestamp() - make_interval(secs => $1::double precision)
    limit 100`,
);
const RELEASE_DEAD = statement("release_dead_workers_jobs", "select runner.release_dead_workers_jobs($1, $2) as released");

export function heartbeatIntervalMs(leaseSeconds: number): number {
  return Math.max(250, Math.floor((leaseSeconds * 1000) / 3));
}

export function reaperIntervalMs(leaseSeconds: number): number {
  return Math.max(250, Math.floor((leaseSeconds * 1000) / 4));
}

/** One heartbeat: renew leases, abort tries that lost theirs, flush logs, mark the process alive. */
export async function beat(engine: Engine): Promise<void> {
  const tokens = engine.inflight.tokens();
  const held = await renewLeases(engine.pool, tokens, engine.leaseSeconds);
  for (const token of tokens) {
    if (!held.has(token)) engine.inflight.abort(token, new LeaseLostError());
  }
  await appendLogLines(engine.pool, engine.inflight.drainAll());
  await query(engine.pool, BEAT, [engine.workerId, os.hostname(), process.pid, [...engine.graphileWorkerIds]]);
}

/** A process is dead when it missed its heartbeat for two leases (it beats thrice a lease). */
export async function releaseDeadWorkersJobs(engine: Engine): Promise<number> {
  const rows = await query<{ released: number }>(engine.pool, RELEASE_DEAD, [engine.leaseSeconds * 2, engine.workerId]);
  const released = rows[0]?.released ?? 0;
  if (released > 0) engine.logger.warn({ released }, "released the graphile-worker jobs of a runner process that stopped beating");
  return released;
}

/** Resumes waiting triggers whose child ended but whose resume job never ran (lost with a
 * crashed process, or failed out of its attempts), so no run is ever held waiting. */
export async function resumeForgottenTriggers(engine: Engine): Promise<number> {
  const rows = await query<{ id: number; child_run_pk: number; task_id: string; try_number: number; max_tries: number; dag_id: string }>(
    engine.pool,
    UNRESUMED,
    [engine.leaseSeconds],
  );
  let resumed = 0;
  for (const row of rows) {
    const dag = engine.registry.has(row.dag_id) ? engine.registry.get(row.dag_id) : undefined;
    const delay = dag ? dag.retryDelayInGrant(row.task_id, row.try_number, row.max_tries) : 0;
    const result = await resumeDeferredTask(engine.pool, row.id, row.child_run_pk, delay);
    if (!result.accepted) continue;
    resumed += 1;
    engine.logger.warn({ dagId: row.dag_id, taskId: row.task_id }, "resumed a waiting trigger whose resume job was lost");
    if (result.retryInMs !== null) engine.wakeWorkersIn(result.retryInMs);
  }
  return resumed;
}

/** One reaper pass: jobs of dead processes released, forgotten waiting triggers resumed, lapsed
 * tries taken over. Returns how many tries it took over. */
export async function reapExpiredLeases(engine: Engine): Promise<number> {
  await releaseDeadWorkersJobs(engine);
  await resumeForgottenTriggers(engine);
  const expired = await findExpiredLeases(engine.pool, 100);
  let taken = 0;
  for (const lost of expired) {
    const dag = engine.registry.has(lost.dagId) ? engine.registry.get(lost.dagId) : undefined;
    const retryDelayMs = dag ? dag.retryDelayInGrant(lost.taskId, lost.tryNumber, lost.maxTries) : 0;
    const reason = `try ${lost.tryNumber} lost: worker ${lost.worker ?? "?"} stopped renewing its lease`;
    const result = await takeOverLostTry(engine.pool, lost.tiId, lost.token, retryDelayMs, reason);
    if (!result.accepted) continue; // renewed at the last moment, or another reaper was first
    taken += 1;
    engine.metrics.takeovers.inc();
    engine.logger.warn(
      { dagId: lost.dagId, runId: lost.runId, taskId: lost.taskId, try: lost.tryNumber, state: result.taskState },
      reason,
    );
    if (result.retryInMs !== null) engine.wakeWorkersIn(result.retryInMs);
  }
  return taken;
}
