// XCom entries (Airflow's cross-task values): list them across DAGs, runs and tasks (`~`), read,
// create, edit and delete one. Tasks push them through their context (ctx.xcom); only a task
// instance's current try's entries are visible (src/runner/xcom.ts).
import type { z } from "zod";
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { type xcomResponse, xcomCollection, xcomResponseNative} from "../responses.ts";
import { xcomCreateBody, xcomEntryQuery, xcomListPathParams, xcomListQuery, xcomPathParams, xcomUpdateBody, rangeOf } from "../schemas.ts";
import { sortKeys, XCOM_SORT_FIELDS, type XComRecord } from "../../runner/index.ts";

const notFound = { description: "Unknown DAG, run, task instance or key" };
const tooBig = { description: "The value is over XCom's size limit (512 KiB as JSON)" };

function serializeXCom(x: XComRecord): z.infer<typeof xcomResponse> {
  return {
    key: x.key,
    timestamp: x.timestamp.toISOString(),
    logical_date: x.logicalDate === null ? null : x.logicalDate.toISOString(),
    map_index: -1,
    task_id: x.taskId,
    dag_id: x.dagId,
    run_id: x.runId,
    dag_display_name: x.dagId,
    task_display_name: x.taskId,
    run_after: x.runAfter.toISOString(),
  };
}

const withValue = (x: XComRecord, stringify = false) => ({ ...serializeXCom(x), value: stringify ? JSON.stringify(x.value) : x.value });
const anyOrOne = (v: string) => (v === "~" ? null : v);

export function xcomRoutes({ runner }: ApiContext): RouteSpec[] {
  const base = "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}/xcomEntries";
  return [
    defineRoute({
      method: "get",
      path: base,
      operationId: "get_xcom_entries",
      summary: "List XCom entries",
      description:
        "`~` for the DAG, the run or the task lists across them. Filters: xcom_key, the _pattern (ILIKE, | for or) and " +
        "_prefix_pattern of the key, DAG, run and task, logical_date and run_after ranges; map_index other than -1 " +
        "matches none (no task is mapped here). order_by: key, dag_id, run_id, task_id, map_index, timestamp, run_after, " +
        "several, '-' for descending. A task instance's current try's entries only.",
      tag: "XCom",
      auth: false,
      params: xcomListPathParams,
      query: xcomListQuery,
      responses: { 200: { description: "A page of entries (without values)", schema: xcomCollection, schemaName: "XComCollectionResponse" } },
      async handle({ params, query, res }) {
        const mapIndex = query.map_index ?? query.map_index_filter;
        const page = await runner.listXComs({
          dagId: anyOrOne(params.dag_id),
          runId: anyOrOne(params.dag_run_id),
          taskId: anyOrOne(params.task_id),
          ...(mapIndex !== undefined && mapIndex !== -1 && { matchNone: true }),
          key: query.xcom_key,
          keyPattern: query.xcom_key_pattern,
          keyPrefix: query.xcom_key_prefix_pattern,
          dagIdPattern: query.dag_display_name_pattern,
          dagIdPrefix: query.dag_display_name_prefix_pattern,
          runIdPattern: query.run_id_pattern,
          runIdPrefix: query.run_id_prefix_pattern,
          taskIdPattern: query.task_id_pattern,
          taskIdPrefix: query.task_id_prefix_pattern,
          logicalDate: rangeOf(query, "logical_date"),
          runAfter: rangeOf(query, "run_after"),
          limit: query.limit,
          offset: query.offset,
          orderBy: sortKeys(query.order_by, XCOM_SORT_FIELDS),
        });
        res.json({ xcom_entries: page.items.map(serializeXCom), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "get",
      path: `${base}/{xcom_key}`,
      operationId: "get_xcom_entry",
      summary: "One XCom entry with its value",
      description: "map_index must be -1 (no task is mapped here). stringify=true answers the value as its JSON text; values are JSON here, so deserialize changes nothing.",
      tag: "XCom",
      auth: false,
      params: xcomPathParams,
      query: xcomEntryQuery,
      responses: { 200: { description: "The entry", schema: xcomResponseNative, schemaName: "XComResponseNative" }, 404: notFound },
      async handle({ params, query, res }) {
        if (query.map_index !== -1) {
          throw new ApiProblem(404, `no task is mapped here: ${params.task_id} has no map index ${query.map_index}`, { field: "map_index" });
        }
        const entry = await runner.getXCom(params.dag_id, params.dag_run_id, params.task_id, params.xcom_key);
        res.json(withValue(entry, query.stringify === true));
      },
    }),
    defineRoute({
      method: "post",
      path: base,
      operationId: "create_xcom_entry",
      summary: "Create an XCom entry",
      description: "On the task instance's current try (a later try or a clear hides it, as the task's own entries). 409 when the key exists: PATCH it.",
      tag: "XCom",
      auth: true,
      params: xcomPathParams.omit({ xcom_key: true }),
      body: xcomCreateBody,
      bodySchemaName: "XComCreateBody",
      responses: { 201: { description: "Created", schema: xcomResponseNative, schemaName: "XComResponseNative" }, 404: notFound, 409: { description: "The key exists" }, 413: tooBig },
      async handle({ params, body, res }) {
        const entry = await runner.createXCom(params.dag_id, params.dag_run_id, params.task_id, body.key, body.value);
        res.status(201).json(withValue(entry));
      },
    }),
    defineRoute({
      method: "patch",
      path: `${base}/{xcom_key}`,
      operationId: "update_xcom_entry",
      summary: "Change an XCom entry's value",
      description: "The entry of the task instance's current try; 404 when it has none.",
      tag: "XCom",
      auth: true,
      params: xcomPathParams,
      body: xcomUpdateBody,
      bodySchemaName: "XComUpdateBody",
      responses: { 200: { description: "The entry after the change", schema: xcomResponseNative, schemaName: "XComResponseNative" }, 404: notFound, 413: tooBig },
      async handle({ params, body, res }) {
        res.json(withValue(await runner.updateXCom(params.dag_id, params.dag_run_id, params.task_id, params.xcom_key, body.value)));
      },
    }),
    defineRoute({
      method: "delete",
      path: `${base}/{xcom_key}`,
      operationId: "delete_xcom_entry",
      summary: "Delete an XCom entry",
      tag: "XCom",
      auth: true,
      params: xcomPathParams,
      query: xcomEntryQuery.pick({ map_index: true }),
      responses: { 204: { description: "Deleted" }, 404: notFound },
      async handle({ params, query, res }) {
        if (query.map_index !== -1) {
          throw new ApiProblem(404, `no task is mapped here: ${params.task_id} has no map index ${query.map_index}`, { field: "map_index" });
        }
        await runner.deleteXCom(params.dag_id, params.dag_run_id, params.task_id, params.xcom_key);
        res.status(204).end();
      },
    }),
  ];
}
