// Airflow's calls that describe what a runner has: a DAG's tasks (GET /dags/{dag_id}/tasks[/{task_id}],
// from the DAG's latest version), and the lists that are honestly
// empty here (dagTags: no DAG has tags; dagWarnings: none are raised; plugins and their import
// errors: no plugins; providers: no provider packages).
import { z } from "zod";
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { dagPathParams, dagIdSchema, pageQuery, taskIdSchema } from "../schemas.ts";
import { dagTagCollection, emptyCollection, taskCollection, taskResponse } from "../responses.ts";
import type { DagTaskRecord } from "../../runner/index.ts";

function timeDelta(ms: number | null) {
  if (ms === null) return null;
  const totalSeconds = Math.floor(ms / 1000);
  return { __type: "TimeDelta", days: Math.floor(totalSeconds / 86_400), seconds: totalSeconds % 86_400, microseconds: (ms % 1000) * 1000 };
}

export function serializeTask(task: DagTaskRecord): z.infer<typeof taskResponse> {
  return {
    task_id: task.taskId,
    task_display_name: task.taskId,
    owner: null,
    start_date: null,
    end_date: null,
    trigger_rule: "all_success",
    depends_on_past: false,
    wait_for_downstream: false,
    retries: task.retries,
    queue: "default",
    pool: "default_pool",
    pool_slots: 1,
    execution_timeout: timeDelta(task.executionTimeoutMs),
    retry_delay: timeDelta(task.retryDelayMs),
    retry_exponential_backoff: 2,
    priority_weight: 1,
    weight_rule: "downstream",
    ui_color: task.kind === "waitingTrigger" ? "#e8dff5" : "#fff",
    ui_fgcolor: "#000",
    template_fields: [],
    downstream_task_ids: [...task.downstream].sort(),
    doc_md: task.description || null,
    operator_name: task.kind === "waitingTrigger" ? "waiting_trigger" : "callable",
    params: {},
    class_ref: null,
    is_mapped: false,
    extra_links: [],
    trigger_dag_id: task.triggerDagId,
  };
}

const TASK_ORDER = ["task_id", "-task_id", "task_display_name", "-task_display_name"] as const;
const tasksQuery = z.object({ order_by: z.enum(TASK_ORDER).default("task_id").describe("task_id or task_display_name (the same here); '-' for descending") }).strict();
const listOnlyQuery = pageQuery.extend({ order_by: z.union([z.string(), z.array(z.string())]).optional().describe("accepted: the list is empty") }).strict();

export function airflowListRoutes({ runner }: ApiContext): RouteSpec[] {
  const empty = (path: string, operationId: string, key: string, why: string, query: z.ZodObject = listOnlyQuery): RouteSpec =>
    defineRoute({
      method: "get",
      path,
      operationId,
      summary: `Always empty here: ${why}`,
      tag: "Monitor",
      auth: false,
      query,
      responses: { 200: { description: `An empty list: ${why}`, schema: emptyCollection(key), schemaName: `${operationId}_response` } },
      handle({ res }) {
        res.json({ [key]: [], total_entries: 0 });
        return Promise.resolve();
      },
    });
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/tasks",
      operationId: "get_tasks",
      summary: "The tasks of a DAG's latest version",
      tag: "Task",
      auth: false,
      params: dagPathParams,
      query: tasksQuery,
      responses: { 200: { description: "The DAG's tasks", schema: taskCollection, schemaName: "TaskCollectionResponse" }, 404: { description: "Unknown DAG" } },
      async handle({ params, query, res }) {
        const dag = await runner.getDag(params.dag_id);
        const tasks = [...dag.tasks].sort((a, b) => a.taskId.localeCompare(b.taskId));
        if (query.order_by.startsWith("-")) tasks.reverse();
        res.json({ tasks: tasks.map(serializeTask), total_entries: tasks.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/tasks/{task_id}",
      operationId: "get_task",
      summary: "One task of a DAG's latest version",
      tag: "Task",
      auth: false,
      params: z.object({ dag_id: dagIdSchema, task_id: taskIdSchema }).strict(),
      responses: { 200: { description: "The task", schema: taskResponse, schemaName: "TaskResponse" }, 404: { description: "Unknown DAG or task" } },
      async handle({ params, res }) {
        const dag = await runner.getDag(params.dag_id);
        const task = dag.tasks.find((t) => t.taskId === params.task_id);
        if (!task) throw new ApiProblem(404, `DAG '${params.dag_id}' has no task '${params.task_id}' (its tasks: ${dag.tasks.map((t) => t.taskId).join(", ")})`, { field: "task_id" });
        res.json(serializeTask(task));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dagTags",
      operationId: "get_dag_tags",
      summary: "DAG tags: none here (DAGs are found by id pattern instead)",
      tag: "DAG",
      auth: false,
      query: pageQuery.extend({ order_by: z.enum(["name", "-name"]).optional(), tag_name_pattern: z.string().max(250).optional(), tag_name_prefix_pattern: z.string().max(250).optional() }).strict(),
      responses: { 200: { description: "No DAG has tags", schema: dagTagCollection, schemaName: "DAGTagCollectionResponse" } },
      handle({ res }) {
        res.json({ tags: [], total_entries: 0 });
        return Promise.resolve();
      },
    }),
    empty("/api/v2/dagWarnings", "list_dag_warnings", "dag_warnings", "the runner raises no DAG warnings; a DAG file that does not load is an import error",
      pageQuery.extend({ dag_id: dagIdSchema.optional(), warning_type: z.string().max(100).optional(), order_by: z.union([z.string(), z.array(z.string())]).optional() }).strict()),
    empty("/api/v2/plugins", "get_plugins", "plugins", "the runner loads no plugins"),
    empty("/api/v2/plugins/importErrors", "import_errors", "import_errors", "the runner loads no plugins", z.object({}).strict()),
    empty("/api/v2/providers", "get_providers", "providers", "the runner uses no provider packages"),
  ];
}
