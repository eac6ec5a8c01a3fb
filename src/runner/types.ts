// Core vocabulary of the DAG runner, shared by the engine (src/runner), the API (src/api),
// the CLI (src/cli) and the web view (src/web). Types only: no behaviour lives here.
//
// Glossary
//   DAG            a named graph of tasks with dependencies, declared in dags/ with the builder.
//   run (dag run)  one execution of a DAG, with its conf; states queued -> running -> success|failed.
//   task instance  one task inside one run; carries a state, a try number and its timing.
//   try            one attempt at a task instance; each try has its own log and attempt token.
//   manifest       the full list of task ids a run declares at creation; the run is success
//                  only when every task in it is terminal (seed: manifest-gated-completion).
//   lease          how long a worker may hold a running try without renewing; when it lapses the
//                  try is taken over (retried or failed) and the dead worker's late result refused.
//   attempt token  a random id per try; results must present it (fencing).
//   deferred       a task waiting on something outside (a child run) that holds no worker slot.
//   waiting trigger a task that triggers a child run of another DAG and defers until it ends.

export const RUN_STATES = ["queued", "running", "success", "failed"] as const;
export type RunState = (typeof RUN_STATES)[number];

export const TASK_STATES = [
  "scheduled",
  "queued",
  "running",
  "deferred",
  "success",
  "failed",
  "skipped",
  "upstream_failed",
  "up_for_retry",
  "removed",
] as const;
export type TaskState = (typeof TASK_STATES)[number];

export const TERMINAL_TASK_STATES: ReadonlySet<TaskState> = new Set([
  "success",
  "failed",
  "skipped",
  "upstream_failed",
  "removed",
]);
export const TERMINAL_RUN_STATES: ReadonlySet<RunState> = new Set(["success", "failed"]);

/** How a run came to be (Airflow's run_type). */
export type RunType = "manual" | "scheduled" | "triggered" | "backfill";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type RunConf = { [key: string]: JsonValue };

export interface DagSummary {
  dagId: string;
  description: string;
  schedule: string | null;
  isPaused: boolean;
  maxActiveRuns: number;
  exclusive: readonly string[];
  taskIds: string[];
  /** JSON Schema of the params (conf) the DAG accepts, for forms and validation messages. */
  paramsJsonSchema: JsonValue;
  fileloc: string;
  /** Its file is gone or no longer declares it: its history stays, it is neither scheduled nor triggerable. */
  isStale: boolean;
  lastParsedTime: Date | null;
  /** Seconds its file took to parse (load and isolated check) the last time. */
  lastParseDurationS: number | null;
  /** Its file does not load now (the DAG keeps its last good version meanwhile). */
  hasImportErrors: boolean;
  latestVersion: DagVersionRecord | null;
  /** The latest version's tasks in a topological order, with their edges (the Graph view). */
  tasks: DagTaskRecord[];
}

/** One version of a DAG (Airflow's DagVersion): made per change of its structure or code. */
export interface DagVersionRecord {
  id: string;
  dagId: string;
  versionNumber: number;
  createdAt: Date;
  /** The DAG folder it was parsed from (dags-folder, stand-dags; dags-folder for a DAG in code). */
  bundleName: string;
  /** sha256 of the bundle the version runs (null for a DAG given to the engine in code). */
  codeHash: string | null;
  fileloc: string;
}

export interface DagTaskRecord {
  taskId: string;
  kind: "callable" | "waitingTrigger";
  description: string;
  upstream: string[];
  downstream: string[];
  retries: number;
  retryDelayMs: number;
  executionTimeoutMs: number | null;
  /** The DAG a waiting trigger starts. */
  triggerDagId: string | null;
}

/** A DAG file that does not load (Airflow's ImportError). */
export interface ImportErrorRecord {
  id: number;
  /** Relative to the repository (dags/<file>.ts). */
  filename: string;
  bundleName: string;
  timestamp: Date;
  stackTrace: string;
}

/** A DAG's source at a version (Airflow's Code view). */
export interface DagSourceRecord {
  dagId: string;
  versionNumber: number | null;
  content: string | null;
}

export interface DagRunRecord {
  dagId: string;
  runId: string;
  state: RunState;
  runType: RunType;
  conf: RunConf;
  logicalDate: Date | null;
  queuedAt: Date;
  startDate: Date | null;
  endDate: Date | null;
  note: string | null;
  /** Task ids declared at creation. */
  manifest: string[];
  /** Set when this run was created by a waiting trigger. */
  parentDagId: string | null;
  parentRunId: string | null;
  /** Why a queued run has not started: an exclusive resource and the run holding it. */
  waitingFor: string | null;
  parentTaskId: string | null;
  triggeredBy: string;
  /** The version the run was made from, whose graph and code it runs to its end (null: a run from before versions). */
  dagVersion: DagVersionRecord | null;
}

export interface TaskInstanceRecord {
  dagId: string;
  runId: string;
  taskId: string;
  state: TaskState;
  tryNumber: number;
  maxTries: number;
  startDate: Date | null;
  endDate: Date | null;
  durationMs: number | null;
  worker: string | null;
  error: string | null;
  /** For a waiting trigger: the child run it started. */
  childDagId: string | null;
  childRunId: string | null;
  /** An operator's note (Airflow's task instance note). */
  note: string | null;
}

export interface TaskLogRecord {
  dagId: string;
  runId: string;
  taskId: string;
  tryNumber: number;
  lines: { at: Date; level: string; message: string }[];
}

export interface VariableRecord {
  key: string;
  value: string;
  description: string | null;
  updatedAt: Date;
}

export interface VariableChange {
  key: string;
  oldValue: string | null;
  newValue: string | null;
  changedAt: Date;
  /** Who changed it: "api:<caller>", "cli", or "run:<dag_id>/<run_id>/<task_id>". */
  changedBy: string;
  dagId: string | null;
  runId: string | null;
}

export interface TriggerRequest {
  runId?: string;
  logicalDate?: Date | null;
  conf?: RunConf;
  note?: string | null;
  runType?: RunType;
  triggeredBy: string;
}

export interface Page<T> {
  items: T[];
  totalEntries: number;
}

export interface ListRunsQuery {
  limit: number;
  offset: number;
  /** One state or any of several. */
  state?: RunState | readonly RunState[];
  /** Newest first by default. */
  order?: "asc" | "desc";
}
