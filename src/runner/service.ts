// The contract between the engine and everything that talks to it (REST API, web view, CLI tests).
// The engine implements RunnerService; src/api depends only on this interface and the errors in
// src/runner/errors.ts, never on engine internals.
import type { ClearRequest, TaskInstanceMark } from "./operator.ts";
import type { ConnectionFields, ConnectionListQuery, ConnectionRecord, ConnectionTestRecord } from "./connections.ts";
import type { DagVersionsQuery } from "./dag-reads.ts";
import type { RunListQuery } from "./run-list.ts";
import type { ListedTaskInstance, TaskInstanceListQuery } from "./task-instance-list.ts";
import type { TaskDependency, TaskTryRecord } from "./task-explain.ts";
import type { EventLogQuery, EventRecord, NewEvent } from "./event-log.ts";
import type { XComListQuery, XComRecord } from "./xcom.ts";
import type { VariableListQuery } from "./variables.ts";
import type { DagListFacts, DagRunFilter } from "./dag-list.ts";
import type { JobListQuery, JobRecord } from "./jobs.ts";
import type { PoolRecord } from "./pools.ts";
import type { BackfillListQuery, BackfillRecord, BackfillRequest } from "./backfills.ts";
import type {
  DagRunRecord,
  DagSourceRecord,
  DagSummary,
  DagTaskRecord,
  DagVersionRecord,
  ImportErrorRecord,
  JsonValue,
  ListRunsQuery,
  Page,
  TaskInstanceRecord,
  TaskLogRecord,
  TriggerRequest,
  VariableChange,
  VariableRecord,
} from "./types.ts";

export interface RunnerService {
  listDags(): Promise<DagSummary[]>;
  /** Throws DagNotFoundError. */
  getDag(dagId: string): Promise<DagSummary>;
  setPaused(dagId: string, paused: boolean): Promise<DagSummary>;
  /** Marks the DAG a favourite of the user (dag-favorites.ts). Throws DagNotFoundError, DagAlreadyFavoriteError. */
  favoriteDag(dagId: string, user: string): Promise<void>;
  /** Throws DagNotFoundError, DagNotFavoriteError (it was not one). */
  unfavoriteDag(dagId: string, user: string): Promise<void>;
  /** The ids of the DAGs the user marked favourite. */
  favoriteDagIds(user: string): Promise<Set<string>>;
  /** The DAG's versions, oldest first (descending: newest first). Throws DagNotFoundError. */
  listDagVersions(dagId: string, query: DagVersionsQuery): Promise<Page<DagVersionRecord>>;
  /** Throws DagNotFoundError, DagVersionNotFoundError. */
  getDagVersion(dagId: string, versionNumber: number): Promise<DagVersionRecord>;
  /** The DAG's file as it was at a version (the latest when null). Throws DagVersionNotFoundError. */
  getDagSource(dagId: string, versionNumber: number | null): Promise<DagSourceRecord>;
  /** The tasks of a version (the graph a run made from it runs). Throws DagVersionNotFoundError. */
  getVersionTasks(dagId: string, versionNumber: number): Promise<DagTaskRecord[]>;
  /** The DAG files that do not load now. */
  listImportErrors(): Promise<ImportErrorRecord[]>;
  /** Asks the parsing runner to parse this file again now (PUT parseDagFile). */
  requestParse(fileloc: string, by: string): Promise<void>;

  /** Validates conf against the DAG's params (ConfValidationError naming the field);
   * DagNotFoundError; DagStaleError; DuplicateRunError when runId exists. The run starts queued. */
  triggerRun(dagId: string, request: TriggerRequest): Promise<DagRunRecord>;
  getRun(dagId: string, runId: string): Promise<DagRunRecord>;
  listRuns(dagId: string, query: ListRunsQuery): Promise<Page<DagRunRecord>>;
  /** Runs of one DAG, several, or every DAG, with Airflow's filters and sort keys (run-list.ts). */
  findRuns(query: RunListQuery): Promise<Page<DagRunRecord>>;
  /** Task instances of one run, several, or every run, with Airflow's filters (task-instance-list.ts). */
  findTaskInstances(query: TaskInstanceListQuery): Promise<Page<ListedTaskInstance>>;
  /** Every try of a task instance so far (Airflow's task instance history). */
  listTaskTries(dagId: string, runId: string, taskId: string): Promise<TaskTryRecord[]>;
  getTaskTry(dagId: string, runId: string, taskId: string, tryNumber: number): Promise<TaskTryRecord>;
  /** Why a task instance is not running now (Airflow's dependencies); empty when nothing holds it. */
  explainTaskInstance(dagId: string, runId: string, taskId: string): Promise<TaskDependency[]>;
  /** The audit trail (event-log.ts): the API and the web view record each change and login. */
  recordEvent(event: NewEvent): Promise<void>;
  listEvents(query: EventLogQuery): Promise<Page<EventRecord>>;
  /** Throws EventLogNotFoundError. */
  getEvent(id: number): Promise<EventRecord>;
  listTaskInstances(dagId: string, runId: string): Promise<TaskInstanceRecord[]>;
  /** Marks a run failed or success (its open child runs too; a run holding a resource frees it)
   * and/or sets its note. Throws DagRunNotFoundError. Returns the run as it is then. */
  patchRun(dagId: string, runId: string, patch: { state?: "failed" | "success"; note?: string | null }, meta: { by: string }): Promise<DagRunRecord>;
  /** default_pool (the alive runners' task slots) and each exclusive resource as a one-slot pool. */
  listPools(): Promise<PoolRecord[]>;
  /** Each runner process (runner.heartbeats) as Airflow's job. */
  listJobs(query: JobListQuery): Promise<Page<JobRecord>>;
  /** Each DAG's latest run, and the DAGs with a run the filter keeps (Airflow's DAG list filters). */
  dagListFacts(filter: DagRunFilter | null): Promise<DagListFacts>;
  /** Airflow's DELETE /dags/{id}: every run's history; a stale DAG itself too (true). Throws
   * DagNotFoundError, RunNotDeletableError (a run not ended). */
  deleteDag(dagId: string): Promise<boolean>;
  /** A task instance of an ended run, with its tries, logs and XCom (run-delete.ts). Throws
   * DagRunNotFoundError, TaskInstanceNotFoundError, RunNotDeletableError (run open, child run). */
  deleteTaskInstance(dagId: string, runId: string, taskId: string): Promise<void>;
  /** Deletes an ended run's history with its child runs (run-delete.ts); the number of runs deleted.
   * Throws DagRunNotFoundError, RunNotDeletableError (a run or child not ended). */
  deleteRun(dagId: string, runId: string): Promise<number>;
  /** Clears task instances so they run again in the same run (see operator.ts); returns the
   * cleared (or, dry, the selected) instances. Throws DagRunNotFoundError, UnknownTaskIdsError. */
  clearTaskInstances(dagId: string, request: ClearRequest): Promise<TaskInstanceRecord[]>;
  /** Marks one task instance success, failed or skipped (as if its try ended so; a running try is
   * stopped) and/or sets its note. Throws DagRunNotFoundError, TaskInstanceNotFoundError. */
  patchTaskInstance(
    dagId: string,
    runId: string,
    taskId: string,
    patch: { state?: TaskInstanceMark; note?: string | null },
    meta: { by: string },
  ): Promise<TaskInstanceRecord>;
  /** Throws TaskInstanceNotFoundError / TryNotFoundError. */
  getTaskLog(dagId: string, runId: string, taskId: string, tryNumber: number): Promise<TaskLogRecord>;
  /** Resolves when the run is terminal (woken by NOTIFY, not by polling) or when the timeout or
   * signal ends the wait; returns the run as it is then. */
  waitForRun(dagId: string, runId: string, options: { timeoutMs: number; signal?: AbortSignal }): Promise<DagRunRecord>;

  listXComs(query: XComListQuery): Promise<Page<XComRecord>>;
  /** XCom of a task instance's current try. Throw DagRunNotFoundError, TaskInstanceNotFoundError,
   * XComNotFoundError; create XComExistsError; a value over XCOM_MAX_BYTES is XComTooLargeError. */
  getXCom(dagId: string, runId: string, taskId: string, key: string): Promise<XComRecord>;
  createXCom(dagId: string, runId: string, taskId: string, key: string, value: JsonValue): Promise<XComRecord>;
  updateXCom(dagId: string, runId: string, taskId: string, key: string, value: JsonValue): Promise<XComRecord>;
  deleteXCom(dagId: string, runId: string, taskId: string, key: string): Promise<void>;
  /** Each named task's return_value in the run; tasks without one are left out. */
  returnValues(dagId: string, runId: string, taskIds: readonly string[]): Promise<Record<string, JsonValue>>;

  /** Backfills (backfills.ts): runs of a scheduled DAG for its past instants in a window. */
  listBackfills(query: BackfillListQuery): Promise<Page<BackfillRecord>>;
  /** Throws BackfillNotFoundError. */
  getBackfill(id: number): Promise<BackfillRecord>;
  /** The logical dates a backfill would run now. Throws DagNotFoundError, DagStaleError,
   * BackfillRefusedError (no schedule, bad window), ConfValidationError. */
  dryRunBackfill(request: BackfillRequest): Promise<Date[]>;
  /** Creates it with its first runs; throws as dryRunBackfill, and BackfillConflictError when the DAG has one open. */
  createBackfill(request: BackfillRequest): Promise<BackfillRecord>;
  /** Throws BackfillNotFoundError, BackfillConflictError (completed). Unpausing makes its next runs at once. */
  setBackfillPaused(id: number, paused: boolean): Promise<BackfillRecord>;
  /** Completes it and fails its queued runs. Throws BackfillNotFoundError, BackfillConflictError (completed). */
  cancelBackfill(id: number, by: string): Promise<BackfillRecord>;

  listVariables(query: VariableListQuery): Promise<Page<VariableRecord>>;
  /** Throws VariableNotFoundError. */
  getVariable(key: string): Promise<VariableRecord>;
  setVariable(key: string, value: string, meta: { changedBy: string; description?: string | null }): Promise<VariableRecord>;
  deleteVariable(key: string, meta: { changedBy: string }): Promise<void>;
  variableHistory(key: string): Promise<VariableChange[]>;

  /** Stored connections (connections.ts), listed with query.alsoListed (the stand's own, read-only). */
  listConnections(query: ConnectionListQuery): Promise<Page<ConnectionRecord>>;
  /** A stored connection. Throws ConnectionNotFoundError. */
  getConnection(connectionId: string): Promise<ConnectionRecord>;
  /** Throws ConnectionExistsError. */
  createConnection(connection: ConnectionFields): Promise<ConnectionRecord>;
  /** Replaces every field of the stored connection of that id. Throws ConnectionNotFoundError. */
  updateConnection(connection: ConnectionFields): Promise<ConnectionRecord>;
  /** Throws ConnectionNotFoundError. */
  deleteConnection(connectionId: string): Promise<void>;
  /** A connection test begins (running) under a new token. Throws ConnectionTestActiveError. */
  startConnectionTest(connectionId: string): Promise<ConnectionTestRecord>;
  finishConnectionTest(token: string, outcome: { status: boolean; message: string }): Promise<ConnectionTestRecord>;
  /** Throws ConnectionTestNotFoundError. */
  getConnectionTest(token: string): Promise<ConnectionTestRecord>;

  /** metadatabaseDetail: why the metadatabase is unhealthy (which Postgres, what error). */
  health(): Promise<{ metadatabase: "healthy" | "unhealthy"; metadatabaseDetail?: string; scheduler: "healthy" | "unhealthy"; latestHeartbeat: Date | null }>;
}
