// Small error classes with typed fields, and coerceError for every catch.
// The API maps these to HTTP statuses by class, never by message text.

export const PG_ERROR = Object.freeze({
  UNIQUE_VIOLATION: "23505",
  FOREIGN_KEY_VIOLATION: "23503",
  SERIALIZATION_FAILURE: "40001",
  DEADLOCK_DETECTED: "40P01",
  UNDEFINED_TABLE: "42P01",
  INVALID_TEXT_REPRESENTATION: "22P02",
  /** Raised by runner.assert_try_holds: the try was taken over (its lease lapsed). */
  TRY_NOT_HOLDER: "RNLST",
  /** Raised by runner.rebind_run_to_latest: the run has not ended. */
  OBJECT_NOT_IN_PREREQUISITE_STATE: "55000",
});

export class RunnerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class DagNotFoundError extends RunnerError {
  constructor(readonly dagId: string) {
    super(`DAG '${dagId}' is not known to the runner (is its file in dags/? GET /api/v2/importErrors lists the files that do not load)`);
  }
}

export class DagStaleError extends RunnerError {
  constructor(readonly dagId: string, readonly fileloc: string) {
    super(`DAG '${dagId}' is stale: its file ${fileloc} is gone or no longer declares it; its runs stay readable, new ones cannot start`);
  }
}

export class DagVersionNotFoundError extends RunnerError {
  constructor(readonly dagId: string, readonly versionNumber: number) {
    super(`DAG '${dagId}' has no version ${versionNumber}`);
  }
}

export class DagRunNotFoundError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string) {
    super(`DAG run '${runId}' of DAG '${dagId}' does not exist`);
  }
}

export class TaskInstanceNotFoundError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string, readonly taskId: string) {
    super(`task '${taskId}' does not exist in run '${runId}' of DAG '${dagId}'`);
  }
}

export class TryNotFoundError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string, readonly taskId: string, readonly tryNumber: number) {
    super(`task '${taskId}' of run '${runId}' (DAG '${dagId}') has no try ${tryNumber}`);
  }
}

export class DuplicateRunError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string) {
    super(`DAG '${dagId}' already has a run with id '${runId}'`);
  }
}

export class VariableNotFoundError extends RunnerError {
  constructor(readonly key: string) {
    super(`variable '${key}' does not exist`);
  }
}

/** A run's conf does not match the DAG's params schema; `field` names the offending path. */
export class ConfValidationError extends RunnerError {
  constructor(readonly dagId: string, readonly field: string, readonly problem: string) {
    super(`conf for DAG '${dagId}' is invalid at '${field}': ${problem}`);
  }
}

/** A DAG definition is malformed (cycle, unknown upstream, duplicate task id). */
export class DagDefinitionError extends RunnerError {
  constructor(readonly dagId: string, readonly taskId: string | null, problem: string) {
    super(`DAG '${dagId}'${taskId ? ` task '${taskId}'` : ""}: ${problem}`);
  }
}

/** Thrown by a task to fail at once without using its remaining retries. */
export class NonRetryableError extends RunnerError {}

/** A try's result or write was refused: another try holds the task now (lease takeover). */
export class TryNotHolderError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string, readonly taskId: string, readonly tryNumber: number) {
    super(`try ${tryNumber} of task '${taskId}' (run '${runId}', DAG '${dagId}') no longer holds the task: its lease lapsed and it was taken over`);
  }
}

/** Abort reasons a task's signal can carry. */
export class TaskTimeoutError extends Error {
  override name = "TaskTimeoutError";
  constructor(readonly timeoutMs: number) {
    super(`execution timeout of ${timeoutMs} ms exceeded`);
  }
}

export class LeaseLostError extends Error {
  override name = "LeaseLostError";
  constructor() {
    super("the try no longer holds the task: another worker took it over, or an operator marked its run or cleared it");
  }
}

export class RunnerShutdownError extends Error {
  override name = "RunnerShutdownError";
  constructor() {
    super("the runner is shutting down; the try is handed back to be retried");
  }
}

/** A clear that names tasks the run does not have. */
export class UnknownTaskIdsError extends RunnerError {
  constructor(
    readonly dagId: string,
    readonly taskIds: readonly string[],
  ) {
    super(`DAG ${dagId} has no task ${taskIds.map((t) => `'${t}'`).join(", ")}`);
    this.name = "UnknownTaskIdsError";
  }
}

/** A clear with run_on_latest_version of a run that has not ended (000018). */
export class RunNotRebindableError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string, reason: string) {
    super(reason);
  }
}

/** A delete of a run (or one of its child runs) that has not ended: mark it failed first. */
export class RunNotDeletableError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string, reason: string) {
    super(reason);
  }
}

/** A change asked of something the runner owns itself (a stand connection, an exclusive resource's pool). */
export class ReadOnlyError extends RunnerError {
  constructor(readonly field: string, reason: string) {
    super(reason);
  }
}

export class XComNotFoundError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string, readonly taskId: string, readonly key: string) {
    super(`task '${taskId}' of run '${runId}' (DAG '${dagId}') has no XCom entry '${key}'`);
  }
}

export class XComExistsError extends RunnerError {
  constructor(readonly dagId: string, readonly runId: string, readonly taskId: string, readonly key: string) {
    super(`task '${taskId}' of run '${runId}' (DAG '${dagId}') already has an XCom entry '${key}': PATCH it to change its value`);
  }
}

export class XComTooLargeError extends RunnerError {
  constructor(readonly where: string, readonly bytes: number, readonly limit: number) {
    super(`${where}: the value is ${bytes} bytes as JSON, over XCom's ${limit}; keep big data in the world's tables and push where it is`);
  }
}
