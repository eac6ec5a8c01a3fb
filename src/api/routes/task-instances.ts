// Task instances of a run: list, get, mark (PATCH new_state / note), clear so they run again, and the
// log of each try, read on with Airflow's continuation token while the try is still running.
import { z } from "zod";
import { type ApiContext, callerOf } from "../context.ts";
import type { RunnerService, TaskInstanceMark } from "../../runner/index.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import {
  clearTaskInstancesBody,
  dagPathParams,
  logPathParams,
  logQuery,
  logResponse,
  patchTaskInstanceBody,
  patchTaskInstanceQuery,
  taskInstanceCollection,
  taskInstanceResponse,
  taskInstancesBatchBody,
  taskInstancesQuery,
  taskPathParams,
  dagIdOrAll,
  runIdSchema,
  type TaskInstanceResponse,
} from "../schemas.ts";
import { dagIdsOf, taskInstanceListFromBatch, taskInstanceListFromQuery } from "../list-filters.ts";

/** A DAG id or ~, and a run id or ~ (every run). */
const tiListPathParams = z.object({ dag_id: dagIdOrAll, dag_run_id: z.union([z.literal("~"), runIdSchema]) }).strict();
import { logAsText, logLines, serializeTaskInstance } from "../serialize.ts";

const collection = { schema: taskInstanceCollection, schemaName: "TaskInstanceCollectionResponse" };
const LOG_TOKEN = "log-continuation";
const logPosition = z.object({ dag_id: z.string(), dag_run_id: z.string(), task_id: z.string(), try_number: z.number(), pos: z.number().int().min(0) }).strict();
type LogPosition = z.infer<typeof logPosition>;

type PatchBody = z.infer<typeof patchTaskInstanceBody>;
type PatchQuery = Pick<z.infer<typeof patchTaskInstanceQuery>, "update_mask">;

/** What a PatchTaskInstanceBody changes, as update_mask limits it: the state to mark (undefined:
 * none) and the note to set (undefined: unchanged, null: cleared). */
export function taskInstancePatchOf(query: PatchQuery, body: PatchBody): { state?: TaskInstanceMark; note?: string | null } {
  const mask = query.update_mask === undefined ? undefined : new Set(query.update_mask);
  const wants = (field: "new_state" | "note") => body[field] !== undefined && (mask === undefined || mask.has(field));
  const state = wants("new_state") ? (body.new_state ?? undefined) : undefined;
  const note = wants("note") ? (body.note ?? null) : undefined;
  return { state, note };
}

/** PATCH of one task instance (by task id, or by map_index -1): marks it and/or sets its note, as
 * the body and update_mask say; the answer is Airflow's collection of the one task instance. */
export async function patchTaskInstanceAnswer(
  runner: RunnerService,
  params: { dag_id: string; dag_run_id: string; task_id: string },
  query: PatchQuery,
  body: PatchBody,
  by: string,
): Promise<{ task_instances: TaskInstanceResponse[]; total_entries: number }> {
  const ti = await runner.patchTaskInstance(params.dag_id, params.dag_run_id, params.task_id, taskInstancePatchOf(query, body), { by });
  const run = await runner.getRun(params.dag_id, params.dag_run_id);
  return { task_instances: [serializeTaskInstance(ti, run)], total_entries: 1 };
}

export function taskInstanceRoutes({ runner, auth }: ApiContext): RouteSpec[] {
  /** 404 for a DAG or run the path names that does not exist (~ names every one). */
  async function knownPath(dagId: string, runId: string): Promise<void> {
    if (dagId !== "~" && runId !== "~") await runner.getRun(dagId, runId);
    else if (dagId !== "~") await runner.getDag(dagId);
  }

  /** Where a continuation token says to read on; 400 naming `token` when it is not one of ours for this try. */
  function readLogToken(token: string | undefined, at: Omit<LogPosition, "pos">): number {
    if (token === undefined) return 0;
    const text = auth.readSigned(LOG_TOKEN, token);
    const parsed = text === undefined ? undefined : logPosition.safeParse(JSON.parse(text));
    if (!parsed?.success) throw new ApiProblem(400, "token: not a continuation token this runner issued (or it was altered)", { field: "token" });
    const p = parsed.data;
    if (p.dag_id !== at.dag_id || p.dag_run_id !== at.dag_run_id || p.task_id !== at.task_id || p.try_number !== at.try_number) {
      throw new ApiProblem(400, "token: this continuation token belongs to another task instance or try", { field: "token" });
    }
    return p.pos;
  }

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
        "its history and log, and a late result of an earlier try is refused. A cleared run keeps the DAG version it was " +
        "made from, unless run_on_latest_version: then the ended run moves to the latest version first (Airflow 3): " +
        "a task that version no longer has ends removed, one it adds is created and runs, kept tasks take its edges.",
      tag: "Task Instance",
      auth: true,
      params: dagPathParams,
      body: clearTaskInstancesBody,
      bodySchemaName: "ClearTaskInstancesBody",
      responses: {
        200: { description: "The task instances cleared (or, dry, that would be)", ...collection },
        400: { description: "No dag_run_id, an unknown task id, or a malformed body" },
        404: { description: "Unknown DAG or run" },
        409: { description: "run_on_latest_version for a run that has not ended" },
      },
      async handle({ params, body, req, res }) {
        if (!body.dag_run_id) throw new ApiProblem(400, "dag_run_id: required; clears act on one run", { field: "dag_run_id" });
        const cleared = await runner.clearTaskInstances(params.dag_id, {
          runId: body.dag_run_id,
          taskIds: body.task_ids?.map((t) => (typeof t === "string" ? t : t[0])) ?? null,
          onlyFailed: body.only_failed,
          includeDownstream: body.include_downstream,
          includeUpstream: body.include_upstream,
          dryRun: body.dry_run,
          runOnLatestVersion: body.run_on_latest_version === true,
          by: callerOf(req),
        });
        if (!body.dry_run && body.note !== undefined) await runner.patchRun(params.dag_id, body.dag_run_id, { note: body.note }, { by: callerOf(req) });
        const run = await runner.getRun(params.dag_id, body.dag_run_id);
        res.json({ task_instances: cleared.map((ti) => serializeTaskInstance(ti, run)), total_entries: cleared.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances",
      operationId: "get_task_instances",
      summary: "List the task instances of a run, of every run of a DAG (~), or of every run (~/~)",
      description:
        "Without filters, every task of the run's manifest in the DAG's order. Airflow's filters: task_id, state, " +
        "try_number and version_number lists; ranges on run_after, logical_date, start_date, end_date, updated_at (the " +
        "latest of queued, start and end) and duration; _pattern (ILIKE, | for or) and _prefix_pattern on the task, DAG " +
        "and run ids. Every task instance is in default_pool and the default queue, with map_index -1; filters on " +
        "executors, operators, task groups and rendered map indexes match none. order_by takes several keys.",
      tag: "Task Instance",
      auth: false,
      params: tiListPathParams,
      query: taskInstancesQuery,
      responses: { 200: { description: "One page of task instances", ...collection }, 404: { description: "Unknown DAG or run" } },
      async handle({ params, query, res }) {
        await knownPath(params.dag_id, params.dag_run_id);
        const page = await runner.findTaskInstances(taskInstanceListFromQuery(query, dagIdsOf(params.dag_id), dagIdsOf(params.dag_run_id)));
        res.json({ task_instances: page.items.map(({ ti, run }) => serializeTaskInstance(ti, run)), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/list",
      operationId: "get_task_instances_batch",
      summary: "List task instances across DAGs and runs (a body of filters)",
      description:
        "Airflow's TaskInstancesBatchBody: dag_ids, dag_run_ids, task_ids, state, the date and duration ranges, pool, " +
        "queue, executor, page_offset and page_limit, order_by (one key or several, comma separated). A DAG or run in " +
        "the path instead of ~ keeps only its task instances.",
      tag: "Task Instance",
      auth: false,
      params: tiListPathParams,
      body: taskInstancesBatchBody,
      bodySchemaName: "TaskInstancesBatchBody",
      audit: false,
      responses: {
        200: { description: "One page of task instances", ...collection },
        404: { description: "Unknown DAG or run" },
        422: { description: "A malformed body or an unknown order_by key" },
      },
      async handle({ params, body, res }) {
        await knownPath(params.dag_id, params.dag_run_id);
        const page = await runner.findTaskInstances(taskInstanceListFromBatch(body, dagIdsOf(params.dag_id), dagIdsOf(params.dag_run_id)));
        res.json({ task_instances: page.items.map(({ ti, run }) => serializeTaskInstance(ti, run)), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}",
      operationId: "get_task_instance",
      summary: "Get a task instance",
      tag: "Task Instance",
      auth: false,
      params: taskPathParams,
      responses: {
        200: { description: "The task instance", schema: taskInstanceResponse, schemaName: "TaskInstanceResponse" },
        404: { description: "Unknown DAG, run or task" },
      },
      async handle({ params, res }) {
        const run = await runner.getRun(params.dag_id, params.dag_run_id);
        const ti = (await runner.listTaskInstances(params.dag_id, params.dag_run_id)).find((t) => t.taskId === params.task_id);
        if (!ti) throw new ApiProblem(404, `task '${params.task_id}' is not in run ${params.dag_id}/${params.dag_run_id}`, { field: "task_id" });
        res.json(serializeTaskInstance(ti, run));
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}",
      operationId: "patch_task_instance",
      summary: "Mark a task instance success, failed or skipped, or set its note",
      description:
        "Airflow's PatchTaskInstanceBody. new_state ends the task instance as if its try ended so (a running try is " +
        "stopped and its late result refused): in an open run success or skipped lets its downstream go on, failed " +
        "ends the run as failed. In a finished run only the task instance changes. include_upstream/downstream/" +
        "future/past are not supported (422). update_mask limits which body fields apply.",
      tag: "Task Instance",
      auth: true,
      params: taskPathParams,
      query: patchTaskInstanceQuery,
      body: patchTaskInstanceBody,
      bodySchemaName: "PatchTaskInstanceBody",
      responses: { 200: { description: "The task instance after the change", ...collection }, 404: { description: "Unknown DAG, run or task" } },
      async handle({ params, query, body, req, res }) {
        res.json(await patchTaskInstanceAnswer(runner, params, query, body, callerOf(req)));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/logs/{try_number}",
      operationId: "get_log",
      summary: "Get the log of one try of a task instance",
      description:
        "JSON ({content, continuation_token}) by default; 'Accept: application/x-ndjson' gives one JSON line per entry and " +
        "'Accept: text/plain' one text line per entry (the token then in the X-Continuation-Token header). While the try " +
        "runs, continuation_token is set: pass it back as ?token= to get the lines written since. It is null once the try " +
        "has ended and every line was sent.",
      tag: "Task Instance",
      auth: false,
      params: logPathParams,
      query: logQuery,
      responses: {
        200: { description: "The try's log", schema: logResponse, schemaName: "TaskInstancesLogResponse" },
        400: { description: "A continuation token that is not one of this runner's for this try" },
        404: { description: "Unknown DAG, run, task, or try" },
      },
      async handle({ params, query, req, res }) {
        const at = { dag_id: params.dag_id, dag_run_id: params.dag_run_id, task_id: params.task_id, try_number: params.try_number };
        const from = readLogToken(query.token, at);
        const log = await runner.getTaskLog(params.dag_id, params.dag_run_id, params.task_id, params.try_number);
        const ti = (await runner.listTaskInstances(params.dag_id, params.dag_run_id)).find((t) => t.taskId === params.task_id);
        const tryRunning = ti !== undefined && ti.tryNumber === params.try_number && (ti.state === "running" || ti.state === "deferred");
        const pos = Math.max(from, log.lines.length);
        const token = tryRunning ? auth.sign(LOG_TOKEN, JSON.stringify({ ...at, pos })) : null;
        const wanted = req.accepts(["application/json", "application/x-ndjson", "text/plain"]);
        if (wanted === "text/plain" || wanted === "application/x-ndjson") {
          if (token !== null) res.setHeader("X-Continuation-Token", token);
          const body = wanted === "text/plain" ? logAsText(log, from) : logLines(log, from).map((line) => `${JSON.stringify(line)}\n`).join("");
          res.type(wanted === "text/plain" ? "text/plain; charset=utf-8" : "application/x-ndjson").send(body);
          return;
        }
        res.json({ content: logLines(log, from), continuation_token: token });
      },
    }),
  ];
}
