// Page actions: trigger a run, pause/unpause a DAG, mark a run failed or success, and clear a run's
// failed tasks, called by the page script with JSON. They
// call RunnerService directly (the same calls the REST API makes), behind the same-origin guard
// in security.ts; conf is validated again here by the engine against the DAG's params.
import express, { type Request, type Response, type Router } from "express";
import { z } from "zod";
import { assertStorableJson, ApiProblem, dagIdSchema, runIdSchema } from "../api/index.ts";
import type { RunnerService } from "../runner/index.ts";
import { webPaths } from "./html.ts";
import { requireSameOriginPage } from "./security.ts";

export const ACTION_BODY_LIMIT_BYTES = 256 * 1024;
export const WEB_TRIGGERED_BY = "web";

const triggerBody = z
  .object({ conf: z.record(z.string(), z.json(), { error: "conf must be a JSON object" }) })
  .strict();
const pauseBody = z.object({ is_paused: z.boolean({ error: "is_paused must be true or false" }) }).strict();
const runStateBody = z.object({ state: z.enum(["failed", "success"], { error: "state must be failed or success" }) }).strict();
const clearBody = z.object({ run_on_latest_version: z.literal(true).optional() }).strict();

function parseBody<T>(schema: z.ZodType<T>, req: Request): T {
  assertStorableJson(req.body);
  const result = schema.safeParse(req.body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "body";
  throw new ApiProblem(422, `${field}: ${issue?.message ?? "invalid body"}`, { field });
}

/** A path parameter checked with its API schema; a bad one is 400 naming the API's field. */
function pathParam(schema: z.ZodType<string>, value: unknown, field: string): string {
  const result = schema.safeParse(value);
  if (!result.success) throw new ApiProblem(400, `${field}: ${result.error.issues[0]?.message ?? "invalid"}`, { field });
  return result.data;
}

function dagIdOf(req: Request): string {
  return pathParam(dagIdSchema, req.params.dagId, "dag_id");
}

/** The event log's row for a page action (the web view has no users: the owner is "web"). */
async function audit(runner: RunnerService, event: string, at: { dagId: string; runId?: string }, extra: unknown): Promise<void> {
  await runner.recordEvent({ event, owner: WEB_TRIGGERED_BY, dagId: at.dagId, taskId: null, runId: at.runId ?? null, extra: JSON.stringify(extra) });
}

async function triggerFromPage(runner: RunnerService, req: Request, res: Response): Promise<void> {
  const dagId = dagIdOf(req);
  const body = parseBody(triggerBody, req);
  const run = await runner.triggerRun(dagId, { conf: body.conf, runType: "manual", triggeredBy: WEB_TRIGGERED_BY });
  await audit(runner, "web_trigger_dag_run", { dagId, runId: run.runId }, { conf: body.conf });
  res.json({ dag_id: run.dagId, dag_run_id: run.runId, state: run.state, href: webPaths.run(run.dagId, run.runId), message: `triggered ${run.dagId}/${run.runId} (${run.state})` });
}

async function pauseFromPage(runner: RunnerService, req: Request, res: Response): Promise<void> {
  const dagId = dagIdOf(req);
  const body = parseBody(pauseBody, req);
  const dag = await runner.setPaused(dagId, body.is_paused);
  await audit(runner, "web_patch_dag", { dagId }, { is_paused: body.is_paused });
  res.json({ dag_id: dag.dagId, is_paused: dag.isPaused });
}

function runIdOf(req: Request): string {
  return pathParam(runIdSchema, req.params.runId, "dag_run_id");
}

async function markFromPage(runner: RunnerService, req: Request, res: Response): Promise<void> {
  const dagId = dagIdOf(req);
  const runId = runIdOf(req);
  const body = parseBody(runStateBody, req);
  const run = await runner.patchRun(dagId, runId, { state: body.state }, { by: WEB_TRIGGERED_BY });
  await audit(runner, "web_patch_dag_run", { dagId, runId }, { state: body.state });
  res.json({ dag_id: run.dagId, dag_run_id: run.runId, state: run.state, message: `run marked ${run.state}` });
}

/** The run's failed tasks and their downstream run again in the same run; with run_on_latest_version,
 * on the DAG's latest version (the run is moved to it first). */
async function clearFromPage(runner: RunnerService, req: Request, res: Response): Promise<void> {
  const dagId = dagIdOf(req);
  const runId = runIdOf(req);
  const body = parseBody(clearBody, req);
  const onLatest = body.run_on_latest_version === true;
  const cleared = await runner.clearTaskInstances(dagId, {
    runId, taskIds: null, onlyFailed: true, includeDownstream: true, includeUpstream: false, dryRun: false, runOnLatestVersion: onLatest, by: WEB_TRIGGERED_BY,
  });
  const ids = cleared.map((ti) => ti.taskId);
  await audit(runner, "web_clear_task_instances", { dagId, runId }, { run_on_latest_version: onLatest, cleared: ids });
  const moved = onLatest ? "moved to the latest version; " : "";
  res.json({ dag_id: dagId, dag_run_id: runId, cleared: ids, message: `${moved}${ids.length === 0 ? "no failed task to clear" : `cleared ${ids.join(", ")}`}` });
}

export function pageActionsRouter(runner: RunnerService): Router {
  const router = express.Router();
  const guard = [requireSameOriginPage(), express.json({ limit: ACTION_BODY_LIMIT_BYTES, strict: true })];
  router.post("/ui/actions/dags/:dagId/trigger", ...guard, (req, res) => triggerFromPage(runner, req, res));
  router.post("/ui/actions/dags/:dagId/pause", ...guard, (req, res) => pauseFromPage(runner, req, res));
  router.post("/ui/actions/dags/:dagId/runs/:runId/state", ...guard, (req, res) => markFromPage(runner, req, res));
  router.post("/ui/actions/dags/:dagId/runs/:runId/clear", ...guard, (req, res) => clearFromPage(runner, req, res));
  return router;
}
