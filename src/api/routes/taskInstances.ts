// Task instances of a run and their logs, one log per try; clearing them so they run again.
import type { ApiContext } from "../context.ts";
import { defineRoute } from "../route.ts";
import type { RouteSpec } from "../route.ts";
import { callerOf } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { clearTaskInstancesBody, dagPathParams, logPathParams, logResponse, runPathParams, taskInstanceCollection } from "../schemas.ts";
import { logAsText, serializeLog, serializeTaskInstance } from "../serialize.ts";

export function taskInstanceRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/api/v2/dags/{dag_id}/clearTaskInstances",
      operationId: "post_clear_task_instances",
      summary: "Clear task instances of a run so they run again in it",
      description:
        "Airflow's body, for one run (dag_run_id is required). dry_run defaults to true, as in Airflow: it lists what " +
        "would be cleared. Selected: task_ids (all when absent), only the failed and upstream_failed ones when " +
        "only_failed (default), with their downstream/upstream when asked; in a failed run, the tasks that never " +
        "started because it failed are cleared with them. Running and deferred instances are never cleared. A " +
        "finished run returns to queued and starts again (taking its exclusive resources); every earlier try keeps " +
        "its history and log, and a late result of an earlier try is refused.",
      tag: "Task Instance",
      auth: true,
      params: dagPathParams,
      body: clearTaskInstancesBody,
      bodySchemaName: "ClearTaskInstancesBody",
      responses: {
        200: { description: "The task instances cleared (or, dry, that would be)", schema: taskInstanceCollection, schemaName: "TaskInstanceCollectionResponse" },
        400: { description: "No dag_run_id, an unknown task id, or a malformed body" },
        404: { description: "Unknown DAG or run" },
      },
      async handle({ params, body, req, res }) {
        if (!body.dag_run_id) throw new ApiProblem(400, "dag_run_id: required; clears act on one run", { field: "dag_run_id" });
        const cleared = await runner.clearTaskInstances(params.dag_id, {
          runId: body.dag_run_id,
          taskIds: body.task_ids ?? null,
          onlyFailed: body.only_failed,
          includeDownstream: body.include_downstream,
          includeUpstream: body.include_upstream,
          dryRun: body.dry_run,
          by: callerOf(req),
        });
        const run = await runner.getRun(params.dag_id, body.dag_run_id);
        res.json({ task_instances: cleared.map((ti) => serializeTaskInstance(ti, run)), total_entries: cleared.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances",
      operationId: "get_task_instances",
      summary: "List the task instances of a run",
      description: "Every task of the run's manifest, in the DAG's declaration order.",
      tag: "Task Instance",
      auth: false,
      params: runPathParams,
      responses: {
        200: { description: "The run's task instances", schema: taskInstanceCollection, schemaName: "TaskInstanceCollectionResponse" },
        404: { description: "Unknown DAG or run" },
      },
      async handle({ params, res }) {
        const run = await runner.getRun(params.dag_id, params.dag_run_id);
        const items = await runner.listTaskInstances(params.dag_id, params.dag_run_id);
        res.json({ task_instances: items.map((ti) => serializeTaskInstance(ti, run)), total_entries: items.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}",
      operationId: "get_log",
      summary: "Get the log of one try of a task instance",
      description: "JSON ({content: [...]}) by default; 'Accept: text/plain' gives one line per entry.",
      tag: "Task Instance",
      auth: false,
      params: logPathParams,
      responses: {
        200: { description: "The try's log", schema: logResponse, schemaName: "TaskInstancesLogResponse" },
        404: { description: "Unknown DAG, run, task, or try" },
      },
      async handle({ params, req, res }) {
        const log = await runner.getTaskLog(params.dag_id, params.dag_run_id, params.task_id, params.try_number);
        if (req.accepts(["application/json", "text/plain"]) === "text/plain") {
          res.type("text/plain; charset=utf-8").send(logAsText(log));
          return;
        }
        res.json(serializeLog(log));
      },
    }),
  ];
}
