// The graphile-worker task `runner_task`: claim the try, run the task function under its
// deadline, and record the result in one transaction that also enqueues what comes next.
import type { JobHelpers } from "graphile-worker";
import type { CallableTask, Dag, TaskResult } from "./dag.ts";
import type { Engine } from "./engine.ts";
import { NonRetryableError, RunnerShutdownError, TaskTimeoutError } from "./errors.ts";
import { coerceError } from "../errors.ts";
import { failPoint, pausePoint } from "./fault-points.ts";
import { type TrackedTry, addLine } from "./inflight.ts";
import { buildTaskContext } from "./task-context.ts";
import { type ClaimedTry, type TryResult, claimTaskTry } from "./task-tries.ts";
import { finishTry } from "./try-results.ts";
import { deferWaitingTrigger } from "./waiting-trigger.ts";

export interface TaskJobPayload {
  ti: number;
  try: number;
}

function parsePayload(payload: unknown): TaskJobPayload {
  const p = payload as Partial<TaskJobPayload> | null;
  if (typeof p?.ti !== "number" || typeof p.try !== "number") {
    throw new Error(`runner_task job has a malformed payload: ${JSON.stringify(payload)}`);
  }
  return { ti: p.ti, try: p.try };
}

export async function runTaskJob(engine: Engine, payload: unknown, helpers: JobHelpers): Promise<void> {
  const { ti, try: tryNumber } = parsePayload(payload);
  const claim = await claimTaskTry(engine.pool, ti, tryNumber, engine.workerId, engine.leaseSeconds, Number(helpers.job.id));
  if (!claim) return; // stale job: the task was skipped, taken over, or this is a duplicate
  engine.metrics.handoff.observe(claim.handoffMs / 1000);
  const tracked = engine.inflight.track(claim);
  try {
    const found = await dagOfRun(engine, claim);
    const dag = found.dag;
    const task = dag?.task(claim.taskId);
    if (!dag || !task) {
      await finishTry(engine, tracked, notDefined(claim, found.problem));
    } else if (task.kind === "waitingTrigger") {
      await deferWaitingTrigger(engine, task, tracked);
    } else {
      await finishTry(engine, tracked, await executeCallable(engine, dag, task, tracked));
    }
  } finally {
    engine.inflight.untrack(claim.token);
  }
}

/** The DAG a run executes: the version it was made from (loaded from the database when this
 * runner has not seen it), else, for a run from before versions, the current one. */
async function dagOfRun(engine: Engine, claim: ClaimedTry): Promise<{ dag?: Dag; problem?: string }> {
  await engine.registry.ready;
  const current = engine.registry.has(claim.dagId) ? engine.registry.get(claim.dagId) : undefined;
  if (claim.dagVersionId === null) return { dag: current };
  const known = engine.registry.version(claim.dagVersionId);
  if (known) return { dag: known };
  if (!engine.loadDagVersion) return { dag: current };
  try {
    const loaded = await engine.loadDagVersion(claim.dagVersionId);
    if (loaded) {
      engine.registry.rememberVersion(claim.dagVersionId, loaded);
      return { dag: loaded };
    }
    return { problem: `its version ${claim.dagVersionId} is not in runner.dag_versions` };
  } catch (err) {
    engine.logger.error({ err: coerceError(err), dagId: claim.dagId, versionId: claim.dagVersionId }, "a DAG version did not load");
    return { problem: `its version ${claim.dagVersionId} did not load on ${engine.workerId}: ${coerceError(err).message}` };
  }
}

function notDefined(claim: ClaimedTry, problem: string | undefined): TryResult {
  const error = `task '${claim.taskId}' of DAG '${claim.dagId}' is not defined in this runner's DAGs${problem ? ` (${problem})` : ""}`;
  return { outcome: "failed", error, retryable: problem !== undefined, retryDelayMs: 0, skip: [], log: [] };
}

/** Runs the function until it settles or its signal aborts (deadline, lease loss, shutdown);
 * a function that ignores its signal is abandoned at that moment and its result never counts. */
async function executeCallable(engine: Engine, dag: Dag, task: CallableTask, tracked: TrackedTry): Promise<TryResult> {
  const signal = tracked.controller.signal;
  const timer =
    task.executionTimeoutMs === null
      ? undefined
      : setTimeout(() => tracked.controller.abort(new TaskTimeoutError(task.executionTimeoutMs ?? 0)), task.executionTimeoutMs);
  let stopWaiting: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () => reject(coerceError(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    stopWaiting = () => signal.removeEventListener("abort", onAbort);
  });
  // an abort while no race listens yet (a try held at a pause point) must not be an unhandled rejection
  aborted.catch(() => undefined);
  try {
    await pausePoint(engine, tracked, "before");
    await failPoint(engine, tracked, "before");
    const ctx = buildTaskContext(engine, tracked);
    const result = await Promise.race([Promise.resolve().then(() => task.run(ctx)), aborted]);
    await pausePoint(engine, tracked, "after");
    await failPoint(engine, tracked, "after");
    return successResult(dag, task, tracked, result);
  } catch (err) {
    return failureResult(dag, task, tracked, coerceError(err));
  } finally {
    clearTimeout(timer);
    stopWaiting();
  }
}

function successResult(dag: Dag, task: CallableTask, tracked: TrackedTry, result: TaskResult): TryResult {
  let skip: string[] = [];
  if (result && typeof result === "object") {
    try {
      skip = dag.tasksToSkip(task.id, result);
    } catch (err) {
      const error = coerceError(err);
      addLine(tracked, "error", error.message);
      return { outcome: "failed", error: error.message, retryable: false, retryDelayMs: 0, skip: [], log: [] };
    }
    if (skip.length > 0) addLine(tracked, "info", `branch: skipping ${skip.join(", ")}`);
  }
  return { outcome: "success", error: null, retryable: false, retryDelayMs: 0, skip, log: [] };
}

function failureResult(dag: Dag, task: CallableTask, tracked: TrackedTry, error: Error): TryResult {
  const shutdown = error instanceof RunnerShutdownError;
  const text = error.name === "Error" ? error.message : `${error.name}: ${error.message}`;
  addLine(tracked, "error", error.stack && !shutdown ? error.stack : text);
  const permanent = !shutdown && !(error instanceof NonRetryableError) && !dag.isRetryable(error);
  if (permanent && tracked.claim.tryNumber < tracked.claim.maxTries) {
    addLine(tracked, "warn", "a permanent error (the DAG's classifier): not retried, though retries are left");
  }
  return {
    outcome: shutdown ? "lost" : "failed",
    error: text,
    retryable: !(error instanceof NonRetryableError) && !permanent,
    retryDelayMs: dag.retryDelayInGrant(task.id, tracked.claim.tryNumber, tracked.claim.maxTries),
    skip: [],
    log: [],
  };
}
