// createRunner: one runner process's engine. It migrates the schema (its own, then the sets of the
// rooms whose code runs with it), records the DAGs, runs graphile-worker in-process with the
// runner's two tasks, and keeps the heartbeat, reaper and scheduler loops; the object it returns is
// also the RunnerService the API calls.
import { randomBytes } from "node:crypto";
import os from "node:os";
import { runMigrations } from "graphile-worker";
import { type Logger, pino } from "pino";
import type { Registry } from "prom-client";
import { processEnv } from "../config/index.ts";
import type { Dag } from "./dag.ts";
import { createPool, query, statement } from "./db.ts";
import type { Engine } from "./engine.ts";
import { RunnerShutdownError } from "./errors.ts";
import { InflightTries } from "./inflight.ts";
import { graphileLogger, JobQueue } from "./job-queue.ts";
import { beat, heartbeatIntervalMs, reapExpiredLeases, reaperIntervalMs } from "./leases.ts";
import { PeriodicLoop } from "./loop.ts";
import { createMetrics } from "./metrics.ts";
import { migrate, type MigrationSet } from "../migrator.ts";
import { RUNNER_MIGRATIONS } from "./migrate.ts";
import { DagRegistry } from "./registry.ts";
import { RunWaiters } from "./run-waiters.ts";
import { startQueuedRuns, syncDags } from "./runs.ts";
import { createScheduledRuns } from "./scheduler.ts";
import { markStopped } from "./jobs.ts";
import { advanceBackfills } from "./backfill-runs.ts";
import type { RunnerService } from "./service.ts";
import { createRunnerService } from "./postgres-service.ts";

export interface RunnerOptions {
  pgUrl: string;
  dags: DagRegistry | readonly Dag[];
  /** graphile-worker jobs run at once in this process (runner.worker_concurrency). */
  concurrency: number;
  /** How long a running try may go without renewal before it is taken over (2..60). */
  leaseSeconds: number;
  workerId?: string;
  logger?: Logger;
  /** graphile-worker's fallback poll (default 10 s): every job the runner adds, and every retry
   * when it comes due, is announced by NOTIFY, so this only bounds recovery from odd cases. */
  pollIntervalMs?: number;
  schedulerIntervalMs?: number;
  /** On stop: how long running tries may finish before their signals abort. */
  shutdownGraceMs?: number;
  /** graphile-worker's localQueue: jobs fetched per query (default: concurrency; 1 disables). */
  localQueueSize?: number;
  /** Honour armed fail points (runner.fail_points, 000011): for tests of reruns, never on a user's stand. */
  failPoints?: boolean;
  /** Other owners' migration sets whose code runs in this process (the server's: the world's, then
   * the loader's), applied after the runner's at start, before any task can run. */
  migrationSets?: readonly MigrationSet[];
  /** Loads a DAG version this runner has not seen (the DAG processor's; see Engine). */
  loadDagVersion?: (versionId: string) => Promise<Dag | undefined>;
}

export interface Runner extends RunnerService {
  readonly workerId: string;
  readonly registry: DagRegistry;
  /** prom-client registry with this runner's metrics, for the API's /metrics. */
  readonly metrics: Registry;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The DAG processor's current set: the registry takes it (or refuses it whole, throwing) and the
   * runs left queued of these DAGs start. */
  applyDags(dags: readonly { dag: Dag; versionId: string | null }[]): Promise<void>;
}

const WAKE_WORKERS = statement("wake_workers", `select pg_notify('jobs:insert', '{"count":1}')`);

function checkOptions(options: RunnerOptions): void {
  if (!Number.isInteger(options.leaseSeconds) || options.leaseSeconds < 2 || options.leaseSeconds > 60) {
    throw new RangeError(`leaseSeconds must be an integer from 2 to 60, got ${options.leaseSeconds}`);
  }
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${options.concurrency}`);
  }
}

function buildEngine(options: RunnerOptions, logger: Logger, registry: DagRegistry): { engine: Engine; clearWakeTimers: () => void } {
  const workerId = options.workerId ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  // each busy worker's handler needs one or two (a transaction beside a query); the API and loops the rest
  const pool = createPool(options.pgUrl, options.concurrency * 2 + 4);
  pool.on("error", (err) => logger.error({ err }, "idle Postgres connection failed"));
  // a connection that dies while checked out must not crash the process; its query fails instead
  pool.on("connect", (client) => client.on("error", (err) => logger.warn({ err }, "Postgres connection failed")));
  const wakeTimers = new Set<NodeJS.Timeout>();
  const engine: Engine = {
    pool,
    registry,
    workerId,
    leaseSeconds: options.leaseSeconds,
    failPoints: options.failPoints ?? false,
    loadDagVersion: options.loadDagVersion,
    logger,
    metrics: createMetrics(pool),
    inflight: new InflightTries(),
    graphileWorkerIds: new Set(),
    wakeWorkersIn(ms) {
      // graphile finds future jobs only by polling; a NOTIFY when the retry is due wakes it now
      const timer = setTimeout(() => {
        wakeTimers.delete(timer);
        query(pool, WAKE_WORKERS, []).catch((err: unknown) => logger.warn({ err }, "waking workers failed"));
      }, ms + 5);
      wakeTimers.add(timer);
    },
  };
  const clearWakeTimers = () => {
    for (const timer of wakeTimers) clearTimeout(timer);
    wakeTimers.clear();
  };
  return { engine, clearWakeTimers };
}

function buildLoops(engine: Engine, options: RunnerOptions): { heartbeat: PeriodicLoop; others: PeriodicLoop[] } {
  const { logger, leaseSeconds } = engine;
  return {
    heartbeat: new PeriodicLoop("heartbeat", heartbeatIntervalMs(leaseSeconds), () => beat(engine), logger),
    others: [
      new PeriodicLoop("reaper", reaperIntervalMs(leaseSeconds), () => reapExpiredLeases(engine).then(() => undefined), logger),
      new PeriodicLoop(
        "scheduler",
        options.schedulerIntervalMs ?? 1000,
        () => createScheduledRuns(engine.pool, engine.registry).then(() => undefined),
        logger,
      ),
      // a backfill's next runs as its active ones end, on the scheduler's beat
      new PeriodicLoop("backfills", options.schedulerIntervalMs ?? 1000, () => advanceBackfills(engine.pool, engine.registry).then(() => undefined), logger),
    ],
  };
}

export function createRunner(options: RunnerOptions): Runner {
  checkOptions(options);
  const logger = options.logger ?? pino({ name: "runner", level: processEnv.logLevel });
  const registry = options.dags instanceof DagRegistry ? options.dags : new DagRegistry(options.dags);
  const { engine, clearWakeTimers } = buildEngine(options, logger, registry);
  const { pool, workerId } = engine;
  const waiters = new RunWaiters(options.pgUrl, logger);
  const { heartbeat, others } = buildLoops(engine, options);
  const queue = new JobQueue(engine, options, () => engine.metrics.queueRestarts.inc());
  let state: "new" | "started" | "stopped" = "new";

  async function start(): Promise<void> {
    if (state !== "new") throw new Error(`runner ${workerId} cannot start: it is ${state}`);
    state = "started";
    await runMigrations({ pgPool: pool, logger: graphileLogger(logger) });
    for (const set of [RUNNER_MIGRATIONS, ...(options.migrationSets ?? [])]) await migrate(pool, set);
    if (!registry.pending) await syncDags(pool, registry);
    await queue.start();
    for (const loop of [heartbeat, ...others]) loop.start();
    await waiters.connect();
    logger.info({ workerId, dags: registry.size }, "runner started");
  }

  async function stop(): Promise<void> {
    const wasStarted = state === "started";
    state = "stopped";
    if (wasStarted) {
      await Promise.all(others.map((loop) => loop.stop()));
      // running tries may finish within the grace period; then their signals abort, and a try
      // that ends that way is handed back (lost, so retried if it has tries left)
      const abortTimer = setTimeout(() => engine.inflight.abortAll(new RunnerShutdownError()), options.shutdownGraceMs ?? 5000);
      try {
        await queue.stop();
      } finally {
        clearTimeout(abortTimer);
      }
      await heartbeat.stop();
      await heartbeat.runNow(); // last log lines of the tries that just ended; drops our lock ids
      await markStopped(engine).catch((err: unknown) => logger.warn({ err, workerId }, "could not record the clean stop in runner.heartbeats"));
      clearWakeTimers();
    } else {
      await queue.stop();
    }
    await waiters.close();
    await pool.end();
    if (wasStarted) logger.info({ workerId }, "runner stopped");
  }

  const service = createRunnerService({ pool, registry, waiters, workerId, leaseSeconds: options.leaseSeconds, concurrency: options.concurrency });
  async function applyDags(dags: readonly { dag: Dag; versionId: string | null }[]): Promise<void> {
    registry.replace(dags);
    await startQueuedRuns(pool, dags.map((d) => d.dag.id));
  }

  return { ...service, workerId, registry, metrics: engine.metrics.registry, start, stop, applyDags };
}
