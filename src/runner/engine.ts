// What the engine's parts share inside one runner process: the pool, the DAGs, who we are, and
// the bookkeeping of tries in flight. Built once by createRunner.
import type pg from "pg";
import type { Logger } from "pino";
import type { Dag } from "./dag.ts";
import type { InflightTries } from "./inflight.ts";
import type { RunnerMetrics } from "./metrics.ts";
import type { DagRegistry } from "./registry.ts";

export interface Engine {
  pool: pg.Pool;
  registry: DagRegistry;
  workerId: string;
  leaseSeconds: number;
  /** Armed fail points make tries fail (tests of reruns only; see 000011). */
  failPoints: boolean;
  logger: Logger;
  metrics: RunnerMetrics;
  inflight: InflightTries;
  /** graphile-worker's lock owner ids in this process (its worker pool's id). */
  graphileWorkerIds: Set<string>;
  /** A version of a DAG this runner has not loaded, from the database (the DAG processor's bundles). */
  loadDagVersion?: (versionId: string) => Promise<Dag | undefined>;
  /** Wakes graphile-worker's idle workers after `ms`, when a retry becomes due. */
  wakeWorkersIn(ms: number): void;
}
