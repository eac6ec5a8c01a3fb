// DELETE of a task instance (of an ended run) and Airflow's bulk call on a run's task instances:
// update marks each one and/or sets its note as PATCH …/taskInstances/{task_id} does; delete removes
// each as DELETE does. Actions run in order; "fail" on a missing task changes nothing of that action.
import { z } from "zod";
import { type ApiContext, callerOf } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { runBulkActions, type BulkActionResult } from "../bulk.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { bulkResponse } from "../responses.ts";
import { patchTaskInstanceBody, taskIdSchema, taskPathParams, runPathParams } from "../schemas.ts";
import { patchTaskInstanceAnswer } from "./task-instances.ts";
import type { RunnerService } from "../../runner/index.ts";

const mapIndex = z.literal(-1, { error: "tasks are not mapped here: map_index is -1" }).nullable().optional();
const entity = patchTaskInstanceBody.extend({ task_id: taskIdSchema, map_index: mapIndex, dag_id: z.string().nullable().optional(), dag_run_id: z.string().nullable().optional() }).strict();
type Entity = z.output<typeof entity>;
const onMissing = z.enum(["fail", "skip"]).default("fail");
const bulkBody = z
  .object({
    actions: z
      .array(
        z.discriminatedUnion("action", [
          z.object({ action: z.literal("update"), entities: z.array(entity).max(1000), update_mask: z.array(z.enum(["new_state", "note"])).nullable().optional(), action_on_non_existence: onMissing }).strict(),
          z.object({ action: z.literal("delete"), entities: z.array(z.union([taskIdSchema, entity])).max(1000), action_on_non_existence: onMissing }).strict(),
          z.object({ action: z.literal("create"), entities: z.array(z.unknown()).max(1000), action_on_existence: z.string().optional() }).strict(),
        ]),
      )
      .max(100),
  })
  .strict();

async function existing(runner: RunnerService, dagId: string, runId: string): Promise<Set<string>> {
  return new Set((await runner.listTaskInstances(dagId, runId)).map((ti) => ti.taskId));
}

export function taskInstanceChangeRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "delete",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}",
      operationId: "delete_task_instance",
      summary: "Delete a task instance of an ended run",
      description:
        "The task instance, its tries, log lines and XCom; its name leaves the run's task list, so clearing the run later " +
        "runs the others. 409 while the run is open, or when its try started a child run (delete that run first).",
      tag: "Task Instance",
      auth: true,
      params: taskPathParams,
      query: z.object({ map_index: z.coerce.number().int().refine((n) => n === -1, "must be -1: tasks are not mapped here").optional() }).strict(),
      responses: { 200: { description: "Deleted (an empty object, as Airflow's)", schema: z.object({}) }, 404: { description: "Unknown DAG, run or task" }, 409: { description: "The run is open, or the task started a child run" } },
      async handle({ params, res }) {
        await runner.deleteTaskInstance(params.dag_id, params.dag_run_id, params.task_id);
        res.json({});
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances",
      operationId: "bulk_task_instances",
      summary: "Mark, note and delete a run's task instances in one call",
      description:
        "Airflow's BulkBody[BulkTaskInstanceBody], actions in order. update: each entity's new_state and/or note, as PATCH " +
        "…/taskInstances/{task_id} (update_mask names which); delete: as DELETE …/taskInstances/{task_id}. create is 400 in " +
        "each action's errors: task instances are made by their run. A missing task with \"fail\" changes nothing of that action.",
      tag: "Task Instance",
      auth: true,
      params: runPathParams,
      body: bulkBody,
      bodySchemaName: "BulkBody_BulkTaskInstanceBody_",
      responses: { 200: { description: "Per action: the task ids changed and the errors", schema: bulkResponse, schemaName: "BulkResponse" }, 404: { description: "Unknown DAG or run" } },
      async handle({ params, body, req, res }) {
        await runner.getRun(params.dag_id, params.dag_run_id);
        const answer = await runBulkActions(body.actions, async (action) => {
          const result: BulkActionResult = { success: [], errors: [] };
          if (action.action === "create") {
            result.errors.push({ error: "task instances are made by their run: trigger or clear a run instead", status_code: 400 });
          } else {
            const entities: Entity[] = action.entities.map((e) => (typeof e === "string" ? entity.parse({ task_id: e }) : e));
            for (const e of entities) {
              const otherDag = e.dag_id !== undefined && e.dag_id !== null && e.dag_id !== params.dag_id;
              const otherRun = e.dag_run_id !== undefined && e.dag_run_id !== null && e.dag_run_id !== params.dag_run_id;
              if (otherDag || otherRun) {
                throw new ApiProblem(400, `actions.entities: ${e.task_id} names another DAG or run than the path's`, { field: "dag_id" });
              }
            }
            const known = await existing(runner, params.dag_id, params.dag_run_id);
            const missing = entities.filter((e) => !known.has(e.task_id)).map((e) => e.task_id);
            if (missing.length > 0 && action.action_on_non_existence === "fail") {
              result.errors.push({ error: `these task instances do not exist in ${params.dag_id}/${params.dag_run_id}: ${missing.join(", ")}`, status_code: 404 });
            } else {
              for (const e of entities.filter((x) => known.has(x.task_id))) {
                if (action.action === "update") {
                  await patchTaskInstanceAnswer(runner, { ...params, task_id: e.task_id }, { update_mask: action.update_mask ?? undefined }, e, callerOf(req));
                } else {
                  try {
                    await runner.deleteTaskInstance(params.dag_id, params.dag_run_id, e.task_id);
                  } catch (err) {
                    result.errors.push({ error: err instanceof Error ? err.message : String(err), status_code: 409 });
                    continue;
                  }
                }
                result.success.push(e.task_id);
              }
            }
          }
          return result;
        });
        res.json(answer);
      },
    }),
  ];
}
