// What an operator does to whole runs, as Airflow's API has it: clear a run (all its task
// instances, or only the failed ones) and clear several at once, delete an ended run's history,
// and the bulk call (create = trigger with a chosen id, update = mark / note, delete).
import { z } from "zod";
import { type ApiContext, callerOf } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { runBulkActions } from "../bulk.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { bulkResponse, dagRunCollection, dagRunResponse, taskInstanceCollection } from "../responses.ts";
import { dagIdSchema, dagOrAllPathParams, runIdSchema, runPathParams } from "../schemas.ts";
import { serializeRun, serializeTaskInstance, triggeredByWithUser } from "../serialize.ts";
import { userOf } from "../auth.ts";
import { DagRunNotFoundError, DuplicateRunError, type RunnerService, type TaskInstanceRecord } from "../../runner/index.ts";

const note = z.string().max(1000).nullable().optional();
const clearOptions = {
  dry_run: z.boolean().default(true).describe("Airflow's default: only list what would be cleared"),
  only_failed: z.boolean().default(false).describe("clear only the failed and upstream_failed task instances (and those its failure kept from starting)"),
  only_new: z.literal(false, { error: "only_new is not supported: clear with run_on_latest_version to run a version's new tasks" }).default(false),
  run_on_latest_version: z.boolean().nullable().optional().describe("move the ended run onto the DAG's latest version first (409 for a run not ended)"),
  note: note.describe("set as each run's note when the clear is not dry"),
};
/** Airflow's DAGRunClearBody. */
const dagRunClearBody = z.object(clearOptions).strict();

const noPartitions = z.null({ error: "runs have no partitions here: select them with dag_runs" }).optional();
const runEntity = z.object({ dag_run_id: runIdSchema, dag_id: dagIdSchema.nullable().optional(), state: z.enum(["queued", "success", "failed"]).nullable().optional(), note }).strict();
/** Airflow's BulkDAGRunClearBody: the runs named in dag_runs (partition selectors have no meaning here). */
const bulkDagRunClearBody = z
  .object({
    ...clearOptions,
    dag_runs: z.array(runEntity).min(1, "name at least one run to clear").max(1000).optional().describe("required here: runs have no partitions to select them by"),
    partition_key: noPartitions,
    partition_date_start: noPartitions,
    partition_date_end: noPartitions,
  })
  .strict();

const onExistence = z.enum(["fail", "skip", "overwrite"]).default("fail");
const onMissing = z.enum(["fail", "skip"]).default("fail");
/** Airflow's BulkBody[BulkDAGRunBody]. */
const bulkDagRunsBody = z
  .object({
    actions: z
      .array(
        z.discriminatedUnion("action", [
          z.object({ action: z.literal("create"), entities: z.array(runEntity).max(1000), action_on_existence: onExistence }).strict(),
          z
            .object({
              action: z.literal("update"),
              entities: z.array(runEntity).max(1000),
              update_mask: z.array(z.enum(["state", "note"])).nullable().optional(),
              action_on_non_existence: onMissing,
            })
            .strict(),
          z.object({ action: z.literal("delete"), entities: z.array(z.union([runIdSchema, runEntity])).max(1000), action_on_non_existence: onMissing }).strict(),
        ]),
      )
      .max(100),
  })
  .strict();
type BulkDagRunsBody = z.output<typeof bulkDagRunsBody>;
type RunEntity = z.output<typeof runEntity>;

/** The DAG a run entity names: its own dag_id, else the path's; 400 when neither names one (path ~). */
function dagOf(entity: { dag_id?: string | null }, pathDag: string, field: string): string {
  const dagId = entity.dag_id ?? (pathDag === "~" ? undefined : pathDag);
  if (dagId === undefined) throw new ApiProblem(400, `${field}: dag_id is required when the path's dag_id is ~`, { field });
  if (pathDag !== "~" && dagId !== pathDag) throw new ApiProblem(400, `${field}: dag_id '${dagId}' differs from the path's '${pathDag}'`, { field });
  return dagId;
}

async function runExists(runner: RunnerService, dagId: string, runId: string): Promise<boolean> {
  try {
    await runner.getRun(dagId, runId);
    return true;
  } catch (err) {
    if (err instanceof DagRunNotFoundError) return false;
    throw err;
  }
}

type ActionResult = { success: string[]; errors: { error: string; status_code: number }[] };

async function applyBulk(runner: RunnerService, pathDag: string, action: BulkDagRunsBody["actions"][number], by: string, user: string | undefined): Promise<ActionResult> {
  const entities: RunEntity[] = action.entities.map((e) => (typeof e === "string" ? { dag_run_id: e } : e));
  const targets = entities.map((e, i) => ({ entity: e, dagId: dagOf(e, pathDag, `actions.entities.${i}.dag_id`) }));
  const exists = await Promise.all(targets.map((t) => runExists(runner, t.dagId, t.entity.dag_run_id)));
  const key = (t: (typeof targets)[number]) => `${t.dagId}/${t.entity.dag_run_id}`;
  const result: ActionResult = { success: [], errors: [] };
  if (action.action === "create") {
    const clash = targets.filter((_, i) => exists[i]);
    if (clash.length > 0 && action.action_on_existence === "fail") {
      return { ...result, errors: [{ error: `these DAG runs already exist: ${clash.map(key).join(", ")}`, status_code: 409 }] };
    }
    for (const [i, t] of targets.entries()) {
      if (exists[i]) {
        if (action.action_on_existence === "skip") continue;
        // overwrite: the run stays (its history is not replaced); its state and note take the entity's
        await patchEntity(runner, t.dagId, t.entity, undefined, by);
      } else {
        if (t.entity.state === "success" || t.entity.state === "failed") {
          result.errors.push({ error: `${key(t)}: a new run starts queued; mark it after it exists`, status_code: 400 });
          continue;
        }
        try {
          await runner.triggerRun(t.dagId, { runId: t.entity.dag_run_id, logicalDate: null, conf: {}, note: t.entity.note ?? null, runType: "manual", triggeredBy: triggeredByWithUser("rest_api", user) });
        } catch (err) {
          if (!(err instanceof DuplicateRunError)) throw err;
          result.errors.push({ error: err.message, status_code: 409 });
          continue;
        }
      }
      result.success.push(key(t));
    }
    return result;
  }
  const missing = targets.filter((_, i) => !exists[i]);
  if (missing.length > 0 && action.action_on_non_existence === "fail") {
    return { ...result, errors: [{ error: `these DAG runs do not exist: ${missing.map(key).join(", ")}`, status_code: 404 }] };
  }
  for (const [i, t] of targets.entries()) {
    if (!exists[i]) continue;
    if (action.action === "update") await patchEntity(runner, t.dagId, t.entity, action.update_mask ?? undefined, by);
    else await runner.deleteRun(t.dagId, t.entity.dag_run_id);
    result.success.push(key(t));
  }
  return result;
}

async function patchEntity(runner: RunnerService, dagId: string, entity: RunEntity, mask: readonly string[] | undefined, by: string): Promise<void> {
  const wants = (field: "state" | "note") => entity[field] !== undefined && (mask === undefined || mask.includes(field));
  if (wants("state") && entity.state === "queued") {
    throw new ApiProblem(400, `state: queued is not supported for ${dagId}/${entity.dag_run_id}; clear the run to run it again`, { field: "state" });
  }
  const state = wants("state") && (entity.state === "failed" || entity.state === "success") ? entity.state : undefined;
  await runner.patchRun(dagId, entity.dag_run_id, { state, note: wants("note") ? (entity.note ?? null) : undefined }, { by });
}

/** Clears every (or every failed) task instance of one run; the instances cleared, or dry, that would be. */
function clearRun(runner: RunnerService, dagId: string, runId: string, body: z.output<typeof dagRunClearBody>, by: string): Promise<TaskInstanceRecord[]> {
  return runner.clearTaskInstances(dagId, {
    runId,
    taskIds: null,
    onlyFailed: body.only_failed,
    includeDownstream: false,
    includeUpstream: false,
    dryRun: body.dry_run,
    runOnLatestVersion: body.run_on_latest_version === true,
    by,
  });
}

export function dagRunActionRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/clear",
      operationId: "clear_dag_run",
      summary: "Clear a run: its task instances run again",
      description:
        "Airflow's DAGRunClearBody. dry_run (default true) lists the task instances that would be cleared; otherwise every " +
        "task instance of the run (only the failed ones with only_failed) is cleared as POST …/clearTaskInstances does, the " +
        "run returns to queued and the answer is the run. Running task instances are never cleared. only_new is not supported (422).",
      tag: "DagRun",
      auth: true,
      params: runPathParams,
      body: dagRunClearBody,
      bodySchemaName: "DAGRunClearBody",
      responses: {
        200: { description: "Dry: the task instances that would be cleared; otherwise the run after the clear", schema: z.union([taskInstanceCollection, dagRunResponse]) },
        404: { description: "Unknown DAG or run" },
        409: { description: "run_on_latest_version for a run that has not ended" },
      },
      async handle({ params, body, req, res }) {
        const by = callerOf(req);
        const cleared = await clearRun(runner, params.dag_id, params.dag_run_id, body, by);
        const run = await runner.getRun(params.dag_id, params.dag_run_id);
        if (body.dry_run) {
          res.json({ task_instances: cleared.map((ti) => serializeTaskInstance(ti, run)), total_entries: cleared.length });
          return;
        }
        if (body.note !== undefined) await runner.patchRun(params.dag_id, params.dag_run_id, { note: body.note }, { by });
        res.json(serializeRun(await runner.getRun(params.dag_id, params.dag_run_id)));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/dags/{dag_id}/clearDagRuns",
      operationId: "clear_dag_runs",
      summary: "Clear several runs at once",
      description:
        "Airflow's BulkDAGRunClearBody: the runs named in dag_runs (each its own dag_id, or the path's), each cleared as " +
        "POST …/dagRuns/{id}/clear does. Every run is checked first: an unknown one is 404 and nothing is cleared. Dry (the " +
        "default) answers the task instances that would be cleared, otherwise the runs after the clear. Partition " +
        "selectors have no meaning here and must be null.",
      tag: "DagRun",
      auth: true,
      params: dagOrAllPathParams,
      body: bulkDagRunClearBody,
      bodySchemaName: "BulkDAGRunClearBody",
      responses: {
        200: { description: "Dry: the task instances that would be cleared; otherwise the runs", schema: z.union([taskInstanceCollection, dagRunCollection]) },
        400: { description: "A run whose DAG is not named, or a partition selector" },
        404: { description: "Unknown DAG or run" },
        409: { description: "run_on_latest_version for a run that has not ended" },
      },
      async handle({ params, body, req, res }) {
        const by = callerOf(req);
        if (body.dag_runs === undefined) throw new ApiProblem(400, "dag_runs: name the runs to clear (runs have no partitions here to select them by)", { field: "dag_runs" });
        const targets = body.dag_runs.map((e, i) => ({ dagId: dagOf(e, params.dag_id, `dag_runs.${i}.dag_id`), runId: e.dag_run_id }));
        for (const t of targets) await runner.getRun(t.dagId, t.runId); // 404 before any clear
        const instances: unknown[] = [];
        const runs: unknown[] = [];
        for (const t of targets) {
          const cleared = await clearRun(runner, t.dagId, t.runId, body, by);
          if (!body.dry_run && body.note !== undefined) await runner.patchRun(t.dagId, t.runId, { note: body.note }, { by });
          const run = await runner.getRun(t.dagId, t.runId);
          instances.push(...cleared.map((ti) => serializeTaskInstance(ti, run)));
          runs.push(serializeRun(run));
        }
        res.json(body.dry_run ? { task_instances: instances, total_entries: instances.length } : { dag_runs: runs, total_entries: runs.length });
      },
    }),
    defineRoute({
      method: "delete",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}",
      operationId: "delete_dag_run",
      summary: "Delete an ended run's history",
      description:
        "The run, the child runs its tasks started, their task instances, tries and logs. Only an ended run (success or " +
        "failed) is deleted: a queued or running one, or one with a child that has not ended, is 409 (mark it failed first), " +
        "so no try in flight or hold on an exclusive resource loses its row. The event log keeps the deletion.",
      tag: "DagRun",
      auth: true,
      params: runPathParams,
      responses: { 204: { description: "Deleted" }, 404: { description: "Unknown DAG or run" }, 409: { description: "The run or a child run has not ended" } },
      async handle({ params, res }) {
        await runner.deleteRun(params.dag_id, params.dag_run_id);
        res.status(204).end();
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags/{dag_id}/dagRuns",
      operationId: "bulk_dag_runs",
      summary: "Create, update and delete runs in one call",
      description:
        "Airflow's BulkBody[BulkDAGRunBody], actions in order. create triggers a manual run with the entity's dag_run_id and " +
        "note (it starts queued; overwrite of an existing run applies its state and note); update marks it (state failed or " +
        "success) and/or sets its note, update_mask naming which; delete deletes an ended run as DELETE …/dagRuns/{id}. An " +
        "action that meets an existing (create) or missing (update, delete) run with \"fail\" changes nothing and reports them.",
      tag: "DagRun",
      auth: true,
      params: dagOrAllPathParams,
      body: bulkDagRunsBody,
      bodySchemaName: "BulkBody_BulkDAGRunBody_",
      responses: {
        200: { description: "Per action: the runs changed (dag_id/dag_run_id) and the errors", schema: bulkResponse, schemaName: "BulkResponse" },
        400: { description: "A run whose DAG is not named" },
        404: { description: "Unknown DAG" },
        409: { description: "A run to delete has not ended" },
      },
      async handle({ params, body, req, res }) {
        if (params.dag_id !== "~") await runner.getDag(params.dag_id);
        res.json(await runBulkActions(body.actions, (action) => applyBulk(runner, params.dag_id, action, callerOf(req), userOf(res.locals))));
      },
    }),
  ];
}
