// The runner's job queue: graphile-worker run in-process with the runner's two tasks, on a pool
// that waits for a restarting Postgres, and kept running. graphile-worker shuts its worker pool
// down on its own when a job write fails for good ("queue is in an inconsistent state"), when a
// worker exits early, or when returning fetched jobs fails; the process lives on, so without a
// keeper no job would run again until someone restarted the runner. JobQueue starts it again.
import { EventEmitter } from "node:events";
import { Logger as GraphileLogger, type Runner as GraphileRunner, type WorkerEvents, run as runGraphile } from "graphile-worker";
import type pg from "pg";
import type { Logger } from "pino";
import { createPatientPool, query, statement, withConnectionPatience } from "./db.ts";
import type { Engine } from "./engine.ts";
import { runTaskJob } from "./execute-task.ts";
import { runResumeJob } from "./waiting-trigger.ts";

export interface JobQueueOptions {
  pgUrl: string;
  /** graphile-worker jobs run at once in this process. */
  concurrency: number;
  /** Jobs fetched per query (graphile's local queue); default: concurrency. */
  localQueueSize?: number;
  /** How often idle workers look for jobs besides LISTEN/NOTIFY, in ms. */
  pollIntervalMs?: number;
  /** On stop: how long running jobs may finish before their signals abort. */
  shutdownGraceMs?: number;
  /** How long the queue waits for a Postgres that went away, in ms (connects and job writes). */
  patienceMs?: number;
}

/** How long graphile's connects and job writes wait for a Postgres that went away before they give up. */
const QUEUE_PATIENCE_MS = 10 * 60_000;

/** Pauses before starting the queue again: 1 s, doubling, 30 s at most. */
export function restartDelayMs(attempt: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempt - 1), 30_000);
}

const UNLOCK_POOL_JOBS = statement("unlock_pool_jobs", "select graphile_worker.force_unlock_workers($1::text[])");

export function graphileLogger(logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields = { scope, ...(meta ?? {}) };
    const name: string = level;
    if (name === "error") logger.error(fields, message);
    else if (name === "warning") logger.warn(fields, message);
    else logger.debug(fields, message); // graphile's info lines are chatter for us
  });
}

/** The graphile-worker options of the runner's queue (the queue-writes tests run graphile with them). */
export function graphileWorkerPreset(localQueueSize: number): { localQueue: { size: number }; completeJobBatchDelay: number } {
  // fetch several ready jobs per query, and complete finished ones in one batch: a job left locked
  // by a crash is released by the reaper, and stale jobs are refused at claim
  return { localQueue: { size: localQueueSize > 1 ? localQueueSize : -1 }, completeJobBatchDelay: 0 };
}

/** graphile-worker's own pool: its connect() waits for a restarting Postgres, and its job writes
 * survive a connection Postgres ends under them (see createPatientPool). */
function createQueuePool(options: JobQueueOptions, logger: Logger): pg.Pool {
  const pool = createPatientPool(options.pgUrl, options.concurrency + 2, {
    patienceMs: options.patienceMs ?? QUEUE_PATIENCE_MS,
    onRetry: (err, attempts, waitedMs) => {
      if (attempts % 5 === 1) logger.warn({ err, attempts, waitedMs }, "job queue: Postgres unreachable; waiting for it before marking jobs done or failed");
    },
    onJobWriteRetry: (err, statement) => logger.warn({ err, statement }, "job queue: Postgres ended the connection under a job write; sending it again on a new connection"),
  });
  pool.on("error", (err) => logger.error({ err }, "idle Postgres connection of the job queue failed"));
  pool.on("connect", (client) => client.on("error", (err) => logger.warn({ err }, "Postgres connection of the job queue failed")));
  return pool;
}

/** One graphile-worker run: the runner handle and the lock owner ids of its worker pool. */
interface Incarnation {
  runner: GraphileRunner;
  poolIds: Set<string>;
}

export class JobQueue {
  private readonly pool: pg.Pool;
  private current: Incarnation | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  /** Lock owner ids of pools that ended on their own and whose jobs are not yet unlocked. */
  private readonly orphanedPoolIds = new Set<string>();
  /** Times graphile-worker's pool ended on its own and was started again (for the log; the metric counts it too). */
  private restarts = 0;

  constructor(
    private readonly engine: Engine,
    private readonly options: JobQueueOptions,
    private readonly onRestart: () => void = () => undefined,
  ) {
    this.pool = createQueuePool(options, engine.logger);
  }

  async start(): Promise<void> {
    await this.launch();
  }

  /** Stops graphile (running jobs get the grace period), then closes the queue's pool. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const current = this.current;
    this.current = undefined;
    try {
      await current?.runner.stop();
    } finally {
      for (const id of current?.poolIds ?? []) this.engine.graphileWorkerIds.delete(id);
      await this.pool.end();
    }
  }

  private async launch(): Promise<void> {
    const poolIds = new Set<string>();
    const runner = await this.runGraphile(poolIds);
    const incarnation = { runner, poolIds };
    this.current = incarnation;
    runner.promise.then(
      () => this.ended(incarnation, undefined),
      (err: unknown) => this.ended(incarnation, err),
    );
  }

  /** graphile's run ended while nobody stopped it: start it again after a pause. */
  private ended(incarnation: Incarnation, err: unknown): void {
    if (this.stopping || this.current !== incarnation) return;
    this.current = undefined;
    for (const id of incarnation.poolIds) this.orphanedPoolIds.add(id);
    this.engine.logger.error(
      { err, poolIds: [...incarnation.poolIds], restartInMs: restartDelayMs(1) },
      "job queue: graphile-worker's pool shut itself down while the runner runs; no job would run; starting it again",
    );
    this.scheduleRestart(1);
  }

  private scheduleRestart(attempt: number): void {
    if (this.stopping) return;
    this.restartTimer = setTimeout(() => void this.restart(attempt), restartDelayMs(attempt));
  }

  private async restart(attempt: number): Promise<void> {
    this.restartTimer = undefined;
    if (this.stopping) return;
    try {
      await this.unlockOrphanedJobs();
      await this.launch();
      if (this.stopping) {
        await this.current?.runner.stop();
        return;
      }
      this.restarts++;
      this.onRestart();
      this.engine.logger.warn({ attempt, restarts: this.restarts }, "job queue: graphile-worker running again");
    } catch (err) {
      if (this.stopping) return;
      const next = attempt + 1;
      this.engine.logger.error({ err, attempt, retryInMs: restartDelayMs(next) }, "job queue: starting graphile-worker again failed; will try again");
      this.scheduleRestart(next);
    }
  }

  /**
   * Jobs the ended pool had fetched or finished but not yet marked stay locked by its id (for
   * graphile's 4 hours). Nothing of that pool runs any more, so they are unlocked now: a job whose
   * try already ended is refused at claim and completed, one whose try is still running in this
   * process is refused the same way (its lease is live), and the rest run.
   */
  private async unlockOrphanedJobs(): Promise<void> {
    if (this.orphanedPoolIds.size === 0) return;
    const ids = [...this.orphanedPoolIds];
    await withConnectionPatience(() => query(this.engine.pool, UNLOCK_POOL_JOBS, [ids]), this.options.patienceMs ?? QUEUE_PATIENCE_MS, (err, attempts) => {
      if (attempts % 5 === 1) this.engine.logger.warn({ err, attempts }, "job queue: Postgres unreachable; waiting for it to unlock the ended pool's jobs");
    });
    for (const id of ids) {
      this.orphanedPoolIds.delete(id);
      this.engine.graphileWorkerIds.delete(id);
    }
  }

  private runGraphile(poolIds: Set<string>): Promise<GraphileRunner> {
    const { engine, options } = this;
    const events: WorkerEvents = new EventEmitter();
    // graphile locks jobs under its pool's id; the heartbeat publishes it so that, if this process
    // dies, another runner can release those locks (runner.release_dead_workers_jobs)
    events.on("pool:create", ({ workerPool }) => {
      poolIds.add(workerPool.id);
      engine.graphileWorkerIds.add(workerPool.id);
    });
    // graphile sends LISTEN "jobs:insert" just after this event, on the same connection; a job added
    // between a worker's last empty fetch and that LISTEN would wait for the next poll (pollInterval,
    // 10 s): at start, and after every reconnect (a Postgres restart). A query queued behind LISTEN
    // returns once it holds; then every worker looks once, so such a job is found at once.
    events.on("pool:listen:success", ({ workerPool, client }) => {
      setImmediate(() => {
        client
          .query("select 1")
          .then(() => {
            if (workerPool._active && !workerPool._shuttingDown) workerPool.nudge(options.concurrency);
          })
          .catch((err: unknown) => engine.logger.debug({ err }, "job queue: the LISTEN connection failed before its first look; graphile connects again"));
      });
    });
    return runGraphile({
      pgPool: this.pool,
      events,
      concurrency: options.concurrency,
      noHandleSignals: true,
      pollInterval: options.pollIntervalMs ?? 10_000,
      logger: graphileLogger(engine.logger),
      // abort is ours to send (see Runner.stop); graphile's own would come after the same grace
      gracefulShutdownAbortTimeout: (options.shutdownGraceMs ?? 5000) + 1000,
      preset: { worker: graphileWorkerPreset(options.localQueueSize ?? options.concurrency) },
      taskList: {
        runner_task: (payload, helpers) => runTaskJob(engine, payload, helpers),
        runner_resume: (payload, helpers) => runResumeJob(engine, payload, helpers),
      },
    });
  }
}
