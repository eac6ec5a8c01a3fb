// The rest of Airflow's task instance calls: its tries (history) and one try, why it is not running
// (dependencies), a dry run of a PATCH, extra links (none) and the external log URL (none: logs
// are in the runner's database), and the map_index routes, which answer for map_index -1 as
// Airflow does for an unmapped task (tasks are never mapped here; listMapped is 404, as Airflow's).
import { z } from "zod";
import { type ApiContext, callerOf } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { extraLinkCollection, taskDependencyCollection, taskTryCollection, taskTryResponse } from "../responses.ts";
import { patchTaskInstanceBody, patchTaskInstanceQuery, taskInstanceCollection, taskPathParams } from "../schemas.ts";
import { serializeDagVersion, serializeTaskInstance } from "../serialize.ts";
import { patchTaskInstanceAnswer } from "./task-instances.ts";
import type { DagRunRecord, RunnerService, TaskInstanceRecord, TaskTryRecord } from "../../runner/index.ts";

const TI = "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}";
const mapIndex = z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(-1).max(1_000_000);
const tryNumber = z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(1, "try numbers start at 1").max(1_000_000);
const mappedParams = taskPathParams.extend({ map_index: mapIndex }).strict();
const tryParams = taskPathParams.extend({ task_try_number: tryNumber }).strict();
const mappedTryParams = mappedParams.extend({ task_try_number: tryNumber }).strict();
const mapQuery = z.object({ map_index: mapIndex.optional() }).strict();
const collection = { schema: taskInstanceCollection, schemaName: "TaskInstanceCollectionResponse" };
const tries = { schema: taskTryCollection, schemaName: "TaskInstanceHistoryCollectionResponse" };
const oneTry = { schema: taskTryResponse, schemaName: "TaskInstanceHistoryResponse" };
const deps = { schema: taskDependencyCollection, schemaName: "TaskDependencyCollectionResponse" };
const notFound = { description: "Unknown DAG, run, task or try, or a map_index other than -1" };

/** Tasks are never mapped: -1 is the task instance itself, any other index is 404 naming it. */
function unmapped(taskId: string, index: number | undefined): void {
  if (index !== undefined && index !== -1) {
    throw new ApiProblem(404, `task '${taskId}' is not mapped: its one task instance has map_index -1, not ${index}`, { field: "map_index" });
  }
}

function serializeTry(t: TaskTryRecord, ti: TaskInstanceRecord, run: DagRunRecord): z.infer<typeof taskTryResponse> {
  const whole = serializeTaskInstance(ti, run);
  return {
    task_id: whole.task_id,
    dag_id: whole.dag_id,
    dag_run_id: whole.dag_run_id,
    map_index: -1,
    start_date: t.startDate.toISOString(),
    end_date: t.endDate === null ? null : t.endDate.toISOString(),
    duration: t.endDate === null ? null : (t.endDate.getTime() - t.startDate.getTime()) / 1000,
    state: t.state === "lost" ? "failed" : t.state,
    try_number: t.tryNumber,
    max_tries: whole.max_tries,
    task_display_name: whole.task_display_name,
    dag_display_name: whole.dag_display_name,
    hostname: t.worker,
    unixname: null,
    pool: whole.pool,
    pool_slots: whole.pool_slots,
    queue: whole.queue,
    priority_weight: whole.priority_weight,
    operator: whole.operator,
    operator_name: whole.operator_name,
    queued_when: null,
    scheduled_when: null,
    pid: null,
    executor: null,
    executor_config: "{}",
    dag_version: run.dagVersion === null ? null : serializeDagVersion(run.dagVersion),
    error: t.state === "lost" ? `lost: ${t.error ?? "its worker stopped heartbeating and the try was taken over"}` : t.error,
  };
}

async function taskInstance(runner: RunnerService, p: { dag_id: string; dag_run_id: string; task_id: string }): Promise<{ ti: TaskInstanceRecord; run: DagRunRecord }> {
  const run = await runner.getRun(p.dag_id, p.dag_run_id);
  const ti = (await runner.listTaskInstances(p.dag_id, p.dag_run_id)).find((t) => t.taskId === p.task_id);
  if (!ti) throw new ApiProblem(404, `task '${p.task_id}' is not in run ${p.dag_id}/${p.dag_run_id}`, { field: "task_id" });
  return { ti, run };
}

export function taskInstanceExtraRoutes({ runner }: ApiContext): RouteSpec[] {
  const listTries = async (p: { dag_id: string; dag_run_id: string; task_id: string }) => {
    const { ti, run } = await taskInstance(runner, p);
    const all = await runner.listTaskTries(p.dag_id, p.dag_run_id, p.task_id);
    return { task_instances: all.map((t) => serializeTry(t, ti, run)), total_entries: all.length };
  };
  const getTry = async (p: { dag_id: string; dag_run_id: string; task_id: string; task_try_number: number }) => {
    const { ti, run } = await taskInstance(runner, p);
    return serializeTry(await runner.getTaskTry(p.dag_id, p.dag_run_id, p.task_id, p.task_try_number), ti, run);
  };
  const explain = async (p: { dag_id: string; dag_run_id: string; task_id: string }) => ({
    dependencies: await runner.explainTaskInstance(p.dag_id, p.dag_run_id, p.task_id),
  });
  const dryRun = async (p: { dag_id: string; dag_run_id: string; task_id: string }) => {
    const { ti, run } = await taskInstance(runner, p);
    return { task_instances: [serializeTaskInstance(ti, run)], total_entries: 1 };
  };
  const explainDoc =
    "Why the task instance is not running now, as Airflow's dependencies: the DAG paused or at max_active_runs, the run " +
    "waiting for an exclusive resource (and the run holding it), upstream tasks not done, a retry's wait, a queued try " +
    "waiting for a worker slot, a waiting trigger's child run, or an end state. Empty when nothing holds it.";

  return [
    // the literal segments first: {map_index} below would take them
    defineRoute({
      method: "get", path: `${TI}/tries`, operationId: "get_task_instance_tries", summary: "Every try of a task instance", tag: "Task Instance", auth: false,
      params: taskPathParams, query: mapQuery, responses: { 200: { description: "The tries, oldest first", ...tries }, 404: notFound },
      async handle({ params, query, res }) {
        unmapped(params.task_id, query.map_index);
        res.json(await listTries(params));
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/tries/{task_try_number}`, operationId: "get_task_instance_try_details", summary: "One try of a task instance", tag: "Task Instance", auth: false,
      params: tryParams, query: mapQuery, responses: { 200: { description: "The try", ...oneTry }, 404: notFound },
      async handle({ params, query, res }) {
        unmapped(params.task_id, query.map_index);
        res.json(await getTry(params));
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/dependencies`, operationId: "get_task_instance_dependencies", summary: "Why a task instance is not running", description: explainDoc,
      tag: "Task Instance", auth: false, params: taskPathParams, responses: { 200: { description: "What holds it", ...deps }, 404: notFound },
      async handle({ params, res }) {
        res.json(await explain(params));
      },
    }),
    defineRoute({
      method: "patch", path: `${TI}/dry_run`, operationId: "patch_task_instance_dry_run", summary: "The task instances a PATCH would change, unchanged", tag: "Task Instance", auth: true,
      params: taskPathParams, query: patchTaskInstanceQuery, body: patchTaskInstanceBody, bodySchemaName: "PatchTaskInstanceBody",
      responses: { 200: { description: "The one task instance a PATCH changes (include_* are not supported)", ...collection }, 404: notFound },
      async handle({ params, res }) {
        res.json(await dryRun(params));
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/links`, operationId: "get_extra_links", summary: "Extra links: none here", tag: "Task Instance", auth: false,
      params: taskPathParams, query: mapQuery.extend({ try_number: tryNumber.optional() }).strict(),
      responses: { 200: { description: "No task declares extra links", schema: extraLinkCollection, schemaName: "ExtraLinkCollectionResponse" }, 404: notFound },
      async handle({ params, query, res }) {
        unmapped(params.task_id, query.map_index);
        await taskInstance(runner, params);
        res.json({ extra_links: {}, total_entries: 0 });
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/externalLogUrl/{try_number}`, operationId: "get_external_log_url", summary: "No external log: logs are in the runner's database", tag: "Task Instance", auth: false,
      params: taskPathParams.extend({ try_number: tryNumber }).strict(), query: mapQuery,
      responses: { 400: { description: "The runner keeps logs itself: GET …/logs/{try_number}" }, 404: notFound },
      async handle({ params }) {
        await taskInstance(runner, params);
        throw new ApiProblem(400, `task '${params.task_id}' has no external log: the runner keeps every try's log, GET ${TI.replace("{dag_id}", params.dag_id).replace("{dag_run_id}", params.dag_run_id).replace("{task_id}", params.task_id)}/logs/${params.try_number}`, { field: "try_number" });
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/listMapped`, operationId: "get_mapped_task_instances", summary: "Mapped task instances: none, tasks are not mapped here", tag: "Task Instance", auth: false,
      params: taskPathParams, query: z.object({}).catchall(z.unknown()), responses: { 404: { description: "The task is not mapped (Airflow's answer for an unmapped task)" } },
      async handle({ params }) {
        await taskInstance(runner, params);
        throw new ApiProblem(404, `task '${params.task_id}' is not mapped: GET …/taskInstances/${params.task_id} (or …/${params.task_id}/-1) is its task instance`, { field: "task_id" });
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/{map_index}`, operationId: "get_mapped_task_instance", summary: "A task instance by map_index (-1 here)", tag: "Task Instance", auth: false,
      params: mappedParams, responses: { 200: { description: "The task instance", schema: taskInstanceCollection.shape.task_instances.element, schemaName: "TaskInstanceResponse" }, 404: notFound },
      async handle({ params, res }) {
        unmapped(params.task_id, params.map_index);
        const { ti, run } = await taskInstance(runner, params);
        res.json(serializeTaskInstance(ti, run));
      },
    }),
    defineRoute({
      method: "patch", path: `${TI}/{map_index}`, operationId: "patch_task_instance_by_map_index", summary: "PATCH a task instance by map_index (-1 here)", tag: "Task Instance", auth: true,
      params: mappedParams, query: patchTaskInstanceQuery, body: patchTaskInstanceBody, bodySchemaName: "PatchTaskInstanceBody",
      responses: { 200: { description: "The task instance after the change", ...collection }, 404: notFound },
      async handle({ params, query, body, req, res }) {
        unmapped(params.task_id, params.map_index);
        res.json(await patchTaskInstanceAnswer(runner, params, query, body, callerOf(req)));
      },
    }),
    defineRoute({
      method: "patch", path: `${TI}/{map_index}/dry_run`, operationId: "patch_task_instance_dry_run_by_map_index", summary: "A PATCH's dry run by map_index (-1 here)", tag: "Task Instance", auth: true,
      params: mappedParams, query: patchTaskInstanceQuery, body: patchTaskInstanceBody, bodySchemaName: "PatchTaskInstanceBody",
      responses: { 200: { description: "The one task instance a PATCH changes", ...collection }, 404: notFound },
      async handle({ params, res }) {
        unmapped(params.task_id, params.map_index);
        res.json(await dryRun(params));
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/{map_index}/tries`, operationId: "get_mapped_task_instance_tries", summary: "Every try, by map_index (-1 here)", tag: "Task Instance", auth: false,
      params: mappedParams, responses: { 200: { description: "The tries, oldest first", ...tries }, 404: notFound },
      async handle({ params, res }) {
        unmapped(params.task_id, params.map_index);
        res.json(await listTries(params));
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/{map_index}/tries/{task_try_number}`, operationId: "get_mapped_task_instance_try_details", summary: "One try, by map_index (-1 here)", tag: "Task Instance", auth: false,
      params: mappedTryParams, responses: { 200: { description: "The try", ...oneTry }, 404: notFound },
      async handle({ params, res }) {
        unmapped(params.task_id, params.map_index);
        res.json(await getTry(params));
      },
    }),
    defineRoute({
      method: "get", path: `${TI}/{map_index}/dependencies`, operationId: "get_task_instance_dependencies_by_map_index", summary: "Why a task instance is not running, by map_index (-1 here)",
      description: explainDoc, tag: "Task Instance", auth: false, params: mappedParams, responses: { 200: { description: "What holds it", ...deps }, 404: notFound },
      async handle({ params, res }) {
        unmapped(params.task_id, params.map_index);
        res.json(await explain(params));
      },
    }),
  ];
}
