// Crash takeover. The heartbeat renews the lease of every try this process runs (and flushes
// their log lines, and records that the process is alive); the reaper, in every runner process,
// takes over tries whose lease lapsed: the try is lost, the task retried or failed, and
// graphile-worker's lock on the dead job cleared, all within the lease rather than 4 hours.
import os from "node:os";
import { run, statement } from "./db.ts";
import { type Engine, LeaseLostError } from "./engine.ts";
import { appendLogLines, findExpiredLeases, renewLeases, takeOverLostTry } from "./task-tries.ts";

const BEAT = statement(
  "process_heartbeat",
  `insert into runner.heartbeats (worker_id, hostname, pid, graphile_worker_ids) values ($1, $2, $3, $4)
   on conflict (worker_id) do update
      set last_beat_at = clock_timestamp(), graphile_worker_ids = excluded.graphile_worker_ids`,
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
  await run(engine.pool, BEAT, [engine.workerId, os.hostname(), process.pid, [...engine.graphileWorkerIds]]);
}

/** A process is dead when it missed its heartbeat for two leases (it beats thrice a lease). */
export async function releaseDeadWorkersJobs(engine: Engine): Promise<number> {
  const rows = await run<{ released: number }>(engine.pool, RELEASE_DEAD, [engine.leaseSeconds * 2, engine.workerId]);
  const released = rows[0]?.released ?? 0;
  if (released > 0) engine.logger.warn({ released }, "released the graphile-worker jobs of a runner process that stopped beating");
  return released;
}

/** One reaper pass: jobs of dead processes released, lapsed tries taken over. Returns how many
 * tries it took over. */
export async function reapExpiredLeases(engine: Engine): Promise<number> {
  await releaseDeadWorkersJobs(engine);
  const expired = await findExpiredLeases(engine.pool, 100);
  let taken = 0;
  for (const lost of expired) {
    const dag = engine.registry.has(lost.dagId) ? engine.registry.get(lost.dagId) : undefined;
    const retryDelayMs = dag ? dag.retryDelayMs(lost.taskId, lost.tryNumber) : 0;
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
