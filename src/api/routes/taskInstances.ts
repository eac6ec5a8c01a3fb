// Task instances of a run and their logs, one log per try.
import type { ApiContext } from "../context.ts";
import { defineRoute } from "../route.ts";
import type { RouteSpec } from "../route.ts";
import { logPathParams, logResponse, runPathParams, taskInstanceCollection } from "../schemas.ts";
import { logAsText, serializeLog, serializeTaskInstance } from "../serialize.ts";

export function taskInstanceRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
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
