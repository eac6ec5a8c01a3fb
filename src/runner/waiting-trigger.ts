// The waiting trigger: a task that starts a run of another DAG and waits for it without holding
// a worker. It creates the child run and defers in one transaction, and its graphile job ends;
// the transaction that ends the child run enqueues `runner_resume`, handled here. A trigger that
// runs again (a retry, a clear) goes back to the child run an earlier try started if that run
// failed: its failed tasks run again in it, under the same run id (000011).
import type { JobHelpers } from "graphile-worker";
import type { Dag, WaitingTriggerTask } from "./dag.ts";
import type { Engine } from "./engine.ts";
import { coerceError } from "../errors.ts";
import { type TrackedTry, addLine, takeLines } from "./inflight.ts";
import { manifestTasks, newRunId } from "./runs.ts";
import { buildTaskContext } from "./task-context.ts";
import { queryOne, statement } from "./db.ts";
import { triesGrantedByClear } from "./operator.ts";
import { deferToChildRun, appendLogLines, deferToPreviousChild, resumeDeferredTask } from "./task-tries.ts";
import { fencedWrite, finishTry } from "./try-results.ts";

export async function deferWaitingTrigger(engine: Engine, task: WaitingTriggerTask, tracked: TrackedTry): Promise<void> {
  const claim = tracked.claim;
  let child: { dag: Dag; conf: ReturnType<Dag["parseConf"]> };
  try {
    const childDag = engine.registry.get(task.triggerDagId);
    const conf = childDag.parseConf(await task.childConf(buildTaskContext(engine, tracked)));
    child = { dag: childDag, conf };
  } catch (err) {
    // a bad child conf or an unknown DAG will not improve with a retry
    const error = coerceError(err).message;
    addLine(tracked, "error", error);
    await finishTry(engine, tracked, { outcome: "failed", error, retryable: false, retryDelayMs: 0, skip: [], log: [] });
    return;
  }
  if (claim.tryNumber > 1) {
    const previous = await deferToPreviousChild(engine.pool, claim, triesGrantedByClear(child.dag), `dag:${claim.dagId}/${claim.runId}/${claim.taskId}`, []);
    if (previous.outcome === "fenced") {
      refused(engine, tracked);
      return;
    }
    if (previous.outcome === "deferred") {
      addLine(
        tracked,
        "info",
        `run ${previous.childRunId} of DAG ${child.dag.id}, started by an earlier try, runs again: ` +
          `${previous.cleared} task(s) cleared in it; deferred until it ends`,
      );
      await appendLogLines(engine.pool, takeLines(tracked));
      return;
    }
  }
  const childRunId = newRunId("triggered");
  addLine(tracked, "info", `triggered run ${childRunId} of DAG ${child.dag.id}; deferred until it ends`);
  const lines = takeLines(tracked);
  const spec = {
    dagId: child.dag.id,
    runId: childRunId,
    conf: child.conf,
    tasks: manifestTasks(child.dag),
    triggeredBy: `dag:${claim.dagId}/${claim.runId}/${claim.taskId}`,
  };
  const childPk = await fencedWrite(engine, tracked, "deferring to a child run", () => deferToChildRun(engine.pool, claim, spec, lines));
  if (childPk === null) refused(engine, tracked);
}

function refused(engine: Engine, tracked: TrackedTry): void {
  const claim = tracked.claim;
  engine.metrics.refusedResults.inc();
  engine.logger.warn(
    { dagId: claim.dagId, runId: claim.runId, taskId: claim.taskId, try: claim.tryNumber },
    "waiting trigger refused: the try no longer holds the task; no child run was created",
  );
}

const MAX_TRIES = statement("max_tries_of", "select max_tries from runner.task_instances where id = $1");

interface ResumePayload {
  ti: number;
  child: number;
  dag: string;
  task: string;
  try: number;
}

function parseResumePayload(payload: unknown): ResumePayload {
  const p = payload as Partial<ResumePayload> | null;
  if (typeof p?.ti !== "number" || typeof p.child !== "number" || typeof p.dag !== "string" || typeof p.task !== "string") {
    throw new Error(`runner_resume job has a malformed payload: ${JSON.stringify(payload)}`);
  }
  return { ti: p.ti, child: p.child, dag: p.dag, task: p.task, try: typeof p.try === "number" ? p.try : 1 };
}

/** The graphile task `runner_resume`: the child run ended, so the waiting trigger ends too. */
export async function runResumeJob(engine: Engine, payload: unknown, _helpers: JobHelpers): Promise<void> {
  const p = parseResumePayload(payload);
  const dag = engine.registry.has(p.dag) ? engine.registry.get(p.dag) : undefined;
  const granted = await queryOne<{ max_tries: number }>(engine.pool, MAX_TRIES, [p.ti]);
  const retryDelayMs = dag ? dag.retryDelayInGrant(p.task, p.try, granted?.max_tries ?? p.try) : 0;
  const resumed = await resumeDeferredTask(engine.pool, p.ti, p.child, retryDelayMs);
  if (!resumed.accepted) return; // already resumed (a duplicate job) or no longer deferred
  if (resumed.resumeLatencyMs !== null) engine.metrics.resume.observe(resumed.resumeLatencyMs / 1000);
  if (resumed.retryInMs !== null) engine.wakeWorkersIn(resumed.retryInMs);
}
