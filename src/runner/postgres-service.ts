// RunnerService over the engine's tables: what the REST API, the web view and the CLI call.
import type pg from "pg";
import { query, queryOne, statement } from "./db.ts";
import { readDags, readDagSource, readDagVersions, readImportErrors, readVersionStructure } from "./dag-reads.ts";
import { requestParse } from "./dag-versions.ts";
import { DagNotFoundError, DagStaleError, DagVersionNotFoundError, TaskInstanceNotFoundError, VariableNotFoundError } from "./errors.ts";
import { readRunList } from "./run-list.ts";
import { readTaskInstanceList } from "./task-instance-list.ts";
import { explainTaskInstance, readTaskTries, readTaskTry } from "./task-explain.ts";
import { readEvent, readEvents, recordEvent } from "./event-log.ts";
import { connectionMethods } from "./connections.ts";
import { backfillService } from "./backfills.ts";
import { deleteDag, deleteRun, deleteTaskInstance } from "./run-delete.ts";
import { readDagListFacts } from "./dag-list.ts";
import { addDagFavorite, readDagFavorites, removeDagFavorite } from "./dag-favorites.ts";
import { aliveThresholdMs, readJobs } from "./jobs.ts";
import { readPools } from "./pools.ts";
import { createXCom, deleteXCom, readReturnValues, readXCom, readXComs, updateXCom } from "./xcom.ts";
import { clearTaskInstances, markRun, patchTaskInstance, setRunNote } from "./operator.ts";
import { readRun, readRuns, readTaskInstances, readTaskLog } from "./read-models.ts";
import type { DagRegistry } from "./registry.ts";
import type { RunWaiters } from "./run-waiters.ts";
import { triggerRun } from "./runs.ts";
import type { RunnerService } from "./service.ts";
import { errorMessage } from "../errors.ts";
import type { DagSummary } from "./types.ts";
import { deleteVariable, getVariable, listVariables, setVariable, variableHistory } from "./variables.ts";

const SET_PAUSED = statement("set_paused", "update runner.dags set is_paused = $2 where dag_id = $1 returning dag_id, is_paused");
const START_QUEUED = statement("service_start_queued_runs", "select runner.start_queued_runs($1)");
const LATEST_BEAT = statement("latest_beat", "select max(last_beat_at) as latest from runner.heartbeats");

export interface ServiceDeps {
  pool: pg.Pool;
  registry: DagRegistry;
  waiters: RunWaiters;
  workerId: string;
  leaseSeconds: number;
  /** Tries this runner runs at once (runner.worker_concurrency), for "why is it not running". */
  concurrency?: number;
}

export function createRunnerService(deps: ServiceDeps): RunnerService {
  const { pool, registry, waiters } = deps;

  /** The DAGs this runner serves: a processor-fed runner every recorded one (stale ones too), a
   * runner given its DAGs in code only those. */
  const served = (rows: DagSummary[]): DagSummary[] => (registry.pending ? rows : rows.filter((dag) => registry.has(dag.dagId)));

  const getDag = async (dagId: string): Promise<DagSummary> => {
    const [dag] = served(await readDags(pool, [dagId]));
    if (!dag) throw new DagNotFoundError(dagId); // not loaded, or loaded but not yet recorded: the runner has not started
    return dag;
  };

  const knownDag = async (dagId: string): Promise<void> => {
    if (registry.has(dagId)) return;
    await getDag(dagId); // a stale DAG keeps its history
  };

  return {
    async listDags() {
      return served(await readDags(pool, null));
    },
    getDag,
    async setPaused(dagId, paused) {
      await knownDag(dagId);
      const row = await queryOne<{ dag_id: string; is_paused: boolean }>(pool, SET_PAUSED, [dagId, paused]);
      if (!row) throw new DagNotFoundError(dagId);
      // unpausing lets the runs that waited queued start, oldest first
      if (!paused) await query(pool, START_QUEUED, [dagId]);
      return getDag(dagId);
    },
    async favoriteDag(dagId, user) {
      await getDag(dagId); // recorded in runner.dags, which the favourite points at
      await addDagFavorite(pool, dagId, user);
    },
    async unfavoriteDag(dagId, user) {
      await getDag(dagId);
      await removeDagFavorite(pool, dagId, user);
    },
    favoriteDagIds: (user) => readDagFavorites(pool, user),
    async listDagVersions(dagId, q) {
      await knownDag(dagId);
      return readDagVersions(pool, dagId, q);
    },
    async getDagVersion(dagId, versionNumber) {
      await knownDag(dagId);
      const [version] = (await readDagVersions(pool, dagId, { limit: 1, offset: 0, versionNumber })).items;
      if (!version) throw new DagVersionNotFoundError(dagId, versionNumber);
      return version;
    },
    async getDagSource(dagId, versionNumber) {
      await knownDag(dagId);
      const source = await readDagSource(pool, dagId, versionNumber);
      if (!source) {
        if (versionNumber !== null) throw new DagVersionNotFoundError(dagId, versionNumber);
        return { dagId, versionNumber: null, content: null };
      }
      return source;
    },
    async getVersionTasks(dagId, versionNumber) {
      await knownDag(dagId);
      const structure = await readVersionStructure(pool, dagId, versionNumber);
      if (!structure) throw new DagVersionNotFoundError(dagId, versionNumber);
      return structure.tasks.map((t) => ({ ...t }));
    },
    listImportErrors: () => readImportErrors(pool),
    async requestParse(fileloc, by) {
      await requestParse(pool, fileloc, by);
    },
    async triggerRun(dagId, request) {
      if (!registry.has(dagId)) {
        const dag = await getDag(dagId);
        if (dag.isStale) throw new DagStaleError(dagId, dag.fileloc);
      }
      const { runId } = await triggerRun(pool, registry, dagId, request);
      return readRun(pool, dagId, runId);
    },
    async getRun(dagId, runId) {
      await knownDag(dagId);
      return readRun(pool, dagId, runId);
    },
    findRuns: (query) => readRunList(pool, query),
    findTaskInstances: (query) => readTaskInstanceList(pool, query),
    recordEvent: (event) => recordEvent(pool, event),
    listEvents: (query) => readEvents(pool, query),
    getEvent: (id) => readEvent(pool, id),
    async listTaskTries(dagId, runId, taskId) {
      await knownDag(dagId);
      return readTaskTries(pool, dagId, runId, taskId);
    },
    async getTaskTry(dagId, runId, taskId, tryNumber) {
      await knownDag(dagId);
      return readTaskTry(pool, dagId, runId, taskId, tryNumber);
    },
    async explainTaskInstance(dagId, runId, taskId) {
      await knownDag(dagId);
      return explainTaskInstance(pool, dagId, runId, taskId, deps.concurrency ?? null);
    },
    async listRuns(dagId, query) {
      await knownDag(dagId);
      return readRuns(pool, dagId, query);
    },
    async listTaskInstances(dagId, runId) {
      await knownDag(dagId);
      return readTaskInstances(pool, dagId, runId);
    },
    async patchRun(dagId, runId, patch, meta) {
      await knownDag(dagId);
      if (patch.state !== undefined) await markRun(pool, dagId, runId, patch.state, meta.by);
      if (patch.note !== undefined) await setRunNote(pool, dagId, runId, patch.note);
      return readRun(pool, dagId, runId);
    },
    dagListFacts: (filter) => readDagListFacts(pool, filter),
    listJobs: (query) => readJobs(pool, deps.leaseSeconds, query),
    listPools: () => readPools(pool, deps.concurrency ?? 1, deps.leaseSeconds),
    async deleteDag(dagId) {
      const dag = await getDag(dagId);
      return deleteDag(pool, dagId, dag.isStale);
    },
    listXComs: (query) => readXComs(pool, query),
    getXCom: (dagId, runId, taskId, key) => readXCom(pool, dagId, runId, taskId, key),
    createXCom: (dagId, runId, taskId, key, value) => createXCom(pool, dagId, runId, taskId, key, value),
    updateXCom: (dagId, runId, taskId, key, value) => updateXCom(pool, dagId, runId, taskId, key, value),
    deleteXCom: (dagId, runId, taskId, key) => deleteXCom(pool, dagId, runId, taskId, key),
    returnValues: (dagId, runId, taskIds) => readReturnValues(pool, dagId, runId, taskIds),
    async deleteTaskInstance(dagId, runId, taskId) {
      await knownDag(dagId);
      await deleteTaskInstance(pool, dagId, runId, taskId);
    },
    async deleteRun(dagId, runId) {
      await knownDag(dagId);
      return deleteRun(pool, dagId, runId);
    },
    async clearTaskInstances(dagId, request) {
      await knownDag(dagId);
      const outcome = await clearTaskInstances(pool, registry, dagId, request);
      const cleared = new Set(outcome.taskIds);
      const instances = outcome.dryInstances ?? (await readTaskInstances(pool, dagId, request.runId));
      return instances.filter((ti) => cleared.has(ti.taskId));
    },
    async patchTaskInstance(dagId, runId, taskId, patch, meta) {
      await knownDag(dagId);
      await patchTaskInstance(pool, dagId, runId, taskId, patch, meta.by);
      const instances = await readTaskInstances(pool, dagId, runId);
      const ti = instances.find((t) => t.taskId === taskId);
      if (!ti) throw new TaskInstanceNotFoundError(dagId, runId, taskId);
      return ti;
    },
    async getTaskLog(dagId, runId, taskId, tryNumber) {
      await knownDag(dagId);
      return readTaskLog(pool, dagId, runId, taskId, tryNumber);
    },
    async waitForRun(dagId, runId, options) {
      await knownDag(dagId);
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
    ...connectionMethods(pool),
    ...backfillService(pool, registry),
    async health() {
      try {
        const row = await queryOne<{ latest: Date | null }>(pool, LATEST_BEAT, []);
        const latest = row?.latest ?? null;
        const threshold = aliveThresholdMs(deps.leaseSeconds);
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
