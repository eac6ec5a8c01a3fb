// Creating runs: the DAG table kept in step with the loaded definitions, run ids, and triggering
// (conf validated against the DAG's params, the manifest frozen into the run at creation).
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { Dag } from "./dag.ts";
import { query, statement } from "./db.ts";
import { DuplicateRunError, PG_ERROR } from "./errors.ts";
import { errorCode } from "../errors.ts";
import { publishDags } from "./dag-versions.ts";
import type { DagRegistry } from "./registry.ts";
import type { RunConf, RunType, TriggerRequest } from "./types.ts";

const START_QUEUED_RUNS = statement("start_queued_runs", "select runner.start_queued_runs($1)");
const CREATE_RUN = statement(
  "create_run",
  "select runner.create_run($1, $2, $3, $4, $5, $6, $7, $8, $9) as run_pk",
);

/** Records DAGs given to the engine in code (a new one starts paused if it asks to; a known one
 * keeps its flag; a version per change of structure) and starts runs left queued, e.g. by a runner
 * that stopped. A runner fed by the DAG processor gets its DAGs from the processor instead. */
export async function syncDags(pool: pg.Pool, registry: DagRegistry): Promise<void> {
  const dags = registry.list();
  const published = await publishDags(pool, { dags: dags.map((dag) => ({ dag, fileloc: dag.fileloc, code: null, parseDurationMs: null, reparsed: true })) });
  registry.replace(dags.map((dag) => ({ dag, versionId: published.find((p) => p.dagId === dag.id)?.versionId ?? null })));
  await startQueuedRuns(pool, dags.map((dag) => dag.id));
}

/** Starts the runs left queued of these DAGs (a runner that stopped, a DAG that came back). */
export async function startQueuedRuns(pool: pg.Pool, dagIds: readonly string[]): Promise<void> {
  for (const dagId of dagIds) await query(pool, START_QUEUED_RUNS, [dagId]);
}

/** Airflow-style run ids; the random tail keeps ids unique when triggers share a millisecond. */
export function newRunId(runType: RunType, at: Date = new Date()): string {
  return `${runType}__${at.toISOString()}_${randomBytes(3).toString("hex")}`;
}

/** The manifest as create_run takes it: every task with its edges and its number of tries. */
export function manifestTasks(dag: Dag): string {
  return JSON.stringify(
    dag.taskIds.map((taskId) => {
      const task = dag.tasks.get(taskId);
      return {
        task_id: taskId,
        upstream: [...new Set(task?.upstream ?? [])],
        downstream: dag.downstream(taskId),
        max_tries: (task?.retries ?? 0) + 1,
      };
    }),
  );
}

export interface NewRun {
  dag: Dag;
  runId: string;
  runType: RunType;
  triggeredBy: string;
  conf: RunConf;
  logicalDate: Date | null;
  note: string | null;
}

/** Inserts the run and its task instances; starts it at once when the DAG has room. */
export async function insertRun(db: pg.Pool | pg.PoolClient, r: NewRun): Promise<number> {
  try {
    const rows = await query<{ run_pk: number }>(db, CREATE_RUN, [
      r.dag.id,
      r.runId,
      r.runType,
      r.triggeredBy,
      JSON.stringify(r.conf),
      r.logicalDate,
      r.note,
      manifestTasks(r.dag),
      null,
    ]);
    const runPk = rows[0]?.run_pk;
    if (runPk === undefined) throw new Error(`create_run returned no run for DAG '${r.dag.id}'`);
    return runPk;
  } catch (err) {
    if (errorCode(err) === PG_ERROR.UNIQUE_VIOLATION) throw new DuplicateRunError(r.dag.id, r.runId);
    throw err;
  }
}

/** Validates and inserts a run for a trigger request (API, CLI, scheduler). */
export async function triggerRun(
  pool: pg.Pool,
  registry: DagRegistry,
  dagId: string,
  request: TriggerRequest,
): Promise<{ runPk: number; runId: string }> {
  const dag = registry.get(dagId);
  const conf = dag.parseConf(request.conf ?? {});
  const runType = request.runType ?? "manual";
  const now = new Date();
  const runId = request.runId ?? newRunId(runType, now);
  const runPk = await insertRun(pool, {
    dag,
    runId,
    runType,
    triggeredBy: request.triggeredBy,
    conf,
    logicalDate: request.logicalDate === undefined ? now : request.logicalDate,
    note: request.note ?? null,
  });
  return { runPk, runId };
}
