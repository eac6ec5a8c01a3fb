// RunnerService over the engine's tables: what the REST API, the web view and the CLI call.
import type pg from "pg";
import { query, queryOne, statement } from "./db.ts";
import { DagNotFoundError, TaskInstanceNotFoundError, VariableNotFoundError } from "./errors.ts";
import { heartbeatIntervalMs } from "./leases.ts";
import { clearTaskInstances, markRun, patchTaskInstance, setRunNote } from "./operator.ts";
import { readRun, readRuns, readTaskInstances, readTaskLog } from "./read-models.ts";
import type { DagRegistry } from "./registry.ts";
import type { RunWaiters } from "./run-waiters.ts";
import { scheduleText, triggerRun } from "./runs.ts";
import type { RunnerService } from "./service.ts";
import { errorMessage } from "../errors.ts";
import type { DagSummary } from "./types.ts";
import { deleteVariable, getVariable, listVariables, setVariable, variableHistory } from "./variables.ts";

const DAG_ROWS = statement("dag_rows", "select dag_id, is_paused from runner.dags where dag_id = any($1)");
const SET_PAUSED = statement("set_paused", "update runner.dags set is_paused = $2 where dag_id = $1 returning dag_id, is_paused");
const START_QUEUED = statement("service_start_queued_runs", "select runner.start_queued_runs($1)");
const LATEST_BEAT = statement("latest_beat", "select max(last_beat_at) as latest from runner.heartbeats");

export interface ServiceDeps {
  pool: pg.Pool;
  registry: DagRegistry;
  waiters: RunWaiters;
  workerId: string;
  leaseSeconds: number;
}

export function createRunnerService(deps: ServiceDeps): RunnerService {
  const { pool, registry, waiters } = deps;

  const summarize = (dagId: string, isPaused: boolean): DagSummary => {
    const dag = registry.get(dagId);
    return {
      dagId,
      description: dag.description,
      schedule: scheduleText(dag),
      isPaused,
      maxActiveRuns: dag.maxActiveRuns,
      exclusive: dag.exclusive,
      taskIds: [...dag.taskIds],
      paramsJsonSchema: dag.paramsJsonSchema(),
      fileloc: dag.fileloc,
    };
  };

  const knownDag = (dagId: string): void => {
    if (!registry.has(dagId)) throw new DagNotFoundError(dagId);
  };

  const getDag = async (dagId: string): Promise<DagSummary> => {
    knownDag(dagId);
    const row = await queryOne<{ dag_id: string; is_paused: boolean }>(pool, DAG_ROWS, [[dagId]]);
    if (!row) throw new DagNotFoundError(dagId); // loaded but not yet recorded: the runner has not started
    return summarize(row.dag_id, row.is_paused);
  };

  return {
    async listDags() {
      const ids = registry.list().map((dag) => dag.id);
      const rows = await query<{ dag_id: string; is_paused: boolean }>(pool, DAG_ROWS, [ids]);
      const paused = new Map(rows.map((row) => [row.dag_id, row.is_paused]));
      return ids.filter((id) => paused.has(id)).map((id) => summarize(id, paused.get(id) ?? false));
    },
    getDag,
    async setPaused(dagId, paused) {
      knownDag(dagId);
      const row = await queryOne<{ dag_id: string; is_paused: boolean }>(pool, SET_PAUSED, [dagId, paused]);
      if (!row) throw new DagNotFoundError(dagId);
      // unpausing lets the runs that waited queued start, oldest first
      if (!paused) await query(pool, START_QUEUED, [dagId]);
      return summarize(row.dag_id, row.is_paused);
    },
    async triggerRun(dagId, request) {
      const { runId } = await triggerRun(pool, registry, dagId, request);
      return readRun(pool, dagId, runId);
    },
    async getRun(dagId, runId) {
      knownDag(dagId);
      return readRun(pool, dagId, runId);
    },
    async listRuns(dagId, query) {
      knownDag(dagId);
      return readRuns(pool, dagId, query);
    },
    async listTaskInstances(dagId, runId) {
      knownDag(dagId);
      return readTaskInstances(pool, dagId, runId);
    },
    async patchRun(dagId, runId, patch, meta) {
      knownDag(dagId);
      if (patch.state !== undefined) await markRun(pool, dagId, runId, patch.state, meta.by);
      if (patch.note !== undefined) await setRunNote(pool, dagId, runId, patch.note);
      return readRun(pool, dagId, runId);
    },
    async clearTaskInstances(dagId, request) {
      knownDag(dagId);
      const cleared = new Set(await clearTaskInstances(pool, registry, dagId, request));
      const instances = await readTaskInstances(pool, dagId, request.runId);
      return instances.filter((ti) => cleared.has(ti.taskId));
    },
    async patchTaskInstance(dagId, runId, taskId, patch, meta) {
      knownDag(dagId);
      await patchTaskInstance(pool, dagId, runId, taskId, patch, meta.by);
      const instances = await readTaskInstances(pool, dagId, runId);
      const ti = instances.find((t) => t.taskId === taskId);
      if (!ti) throw new TaskInstanceNotFoundError(dagId, runId, taskId);
      return ti;
    },
    async getTaskLog(dagId, runId, taskId, tryNumber) {
      knownDag(dagId);
      return readTaskLog(pool, dagId, runId, taskId, tryNumber);
    },
    async waitForRun(dagId, runId, options) {
      knownDag(dagId);
      return waiters.wait(dagId, runId, options, () => readRun(pool, dagId, runId));
    },
    listVariables: (query) => listVariables(pool, query),
    async getVariable(key) {
      const variable = await getVariable(pool, key);
      if (!variable) throw new VariableNotFoundError(key);
      return variable;
    },
    setVariable: (key, value, meta) => setVariable(pool, key, value, { changedBy: meta.changedBy }, meta.description),
    deleteVariable: (key, meta) => deleteVariable(pool, key, { changedBy: meta.changedBy }),
    variableHistory: (key) => variableHistory(pool, key),
    async health() {
      try {
        const row = await queryOne<{ latest: Date | null }>(pool, LATEST_BEAT, []);
        const latest = row?.latest ?? null;
        const threshold = Math.max(30_000, 3 * heartbeatIntervalMs(deps.leaseSeconds));
        const alive = latest !== null && Date.now() - latest.getTime() < threshold;
        return { metadatabase: "healthy", scheduler: alive ? "healthy" : "unhealthy", latestHeartbeat: latest };
      } catch (err) {
        const where = `${pool.options.host ?? "?"}:${String(pool.options.port ?? "?")}/${pool.options.database ?? "?"}`;
        const detail = `cannot reach the runner's Postgres at ${where}: ${errorMessage(err)}; make check-services shows whether it runs`;
        return { metadatabase: "unhealthy", metadatabaseDetail: detail, scheduler: "unhealthy", latestHeartbeat: null };
      }
    },
  };
}
