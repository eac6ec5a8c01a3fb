// Airflow's list parameters as the runner's queries: runs (GET …/dagRuns, POST …/dagRuns/list) as a
// RunListQuery, task instances (GET …/taskInstances, POST …/taskInstances/list) as a
// TaskInstanceListQuery. What this runner does not have (partitions, assets, executors, operator
// classes, task groups, mapped tasks) is the same for every row, so a filter on it matches all or none.
import { ApiProblem } from "./problem.ts";
import { patternMatcher } from "./airflow-pattern.ts";
import {
  rangeOf,
  RUN_ORDER_FIELDS,
  TASK_INSTANCE_ORDER_FIELDS,
  type dagRunsBatchBody,
  type ListRunsQueryInput,
  type taskInstancesBatchBody,
  type TaskInstancesQueryInput,
} from "./schemas.ts";
import {
  RUN_SORT_FIELDS,
  sortKeys,
  TASK_INSTANCE_SORT_FIELDS,
  type RunListQuery,
  type RunState,
  type TaskInstanceListQuery,
  type TaskState,
} from "../runner/index.ts";
import type { z } from "zod";

/** Airflow's run type names as the runner stores them (a waiting trigger's child is `triggered`). */
function runTypeOf(type: string): string {
  return type === "operator_triggered" ? "triggered" : type;
}

/** order_by values: queued_at is run_after (the runner's older name for it). */
function orderOf(values: readonly string[]): RunListQuery["orderBy"] {
  return sortKeys(values.map((v) => v.replace(/queued_at$/, "run_after")), RUN_SORT_FIELDS);
}

/** The DAGs a path's dag_id names: one, or every one for `~`. */
export function dagIdsOf(dagId: string): string[] | null {
  return dagId === "~" ? null : [dagId];
}

export function runListFromQuery(q: ListRunsQueryInput, dagIds: readonly string[] | null): RunListQuery {
  const none =
    q.partition_date_gte ?? q.partition_date_lte ?? q.bundle_version ?? q.partition_key_pattern ?? q.partition_key_prefix_pattern ?? q.consuming_asset_pattern;
  return {
    dagIds,
    limit: q.limit,
    offset: q.offset,
    ...(none !== undefined && { matchNone: true }),
    states: q.state,
    runTypes: q.run_type?.map(runTypeOf),
    runAfter: rangeOf(q, "run_after"),
    logicalDate: rangeOf(q, "logical_date"),
    startDate: rangeOf(q, "start_date"),
    endDate: rangeOf(q, "end_date"),
    updatedAt: rangeOf(q, "updated_at"),
    duration: rangeOf(q, "duration"),
    confContains: q.conf_contains,
    versionNumbers: q.dag_version,
    runIdPattern: q.run_id_pattern,
    runIdPrefix: q.run_id_prefix_pattern,
    dagIdPattern: q.dag_id_pattern,
    dagIdPrefix: q.dag_id_prefix_pattern,
    triggeringUserPattern: q.triggering_user_name_pattern,
    triggeringUserPrefix: q.triggering_user_name_prefix_pattern,
    orderBy: orderOf(q.order_by),
  };
}

/** A batch body's order_by: one key or several, comma separated, each checked against `fields`. */
function batchOrder(text: string | null | undefined, fields: readonly string[]): string[] {
  const keys = (text ?? "").split(",").map((k) => k.trim()).filter((k) => k.length > 0);
  const unknown = keys.find((k) => !fields.includes(k.replace(/^-/, "")));
  if (unknown !== undefined) throw new ApiProblem(422, `order_by: '${unknown}' is not one of ${fields.join(", ")} (each may start with '-')`, { field: "order_by" });
  return keys;
}

/** Which of a batch body's ids the path allows: the path's one DAG (or run), or any for `~`. */
function within(asked: readonly string[] | null | undefined, path: readonly string[] | null): readonly string[] | null {
  const given = asked ?? null;
  if (path === null) return given;
  return given === null ? path : given.filter((id) => path.includes(id));
}

/** DAGRunsBatchBody: dag_ids within the path's DAG (or any, for `~`); order_by one key or several, comma separated. */
export function runListFromBatch(body: z.infer<typeof dagRunsBatchBody>, pathDagIds: readonly string[] | null): RunListQuery {
  const order = batchOrder(body.order_by, RUN_ORDER_FIELDS);
  const states = body.states?.filter((s): s is RunState => s !== null);
  return {
    dagIds: within(body.dag_ids, pathDagIds),
    limit: body.page_limit,
    offset: body.page_offset,
    ...(states !== undefined && states.length > 0 && { states }),
    runAfter: rangeOf(body, "run_after"),
    logicalDate: rangeOf(body, "logical_date"),
    startDate: rangeOf(body, "start_date"),
    endDate: rangeOf(body, "end_date"),
    duration: rangeOf(body, "duration"),
    confContains: body.conf_contains ?? undefined,
    orderBy: orderOf(order.length > 0 ? order : ["-id"]),
  };
}

/** The one value every task instance has for a field this runner does not vary (pool, queue):
 * whether a list and two patterns given for it keep every row. */
function keepsAll(value: string, list: readonly string[] | null | undefined, pattern: string | undefined, prefix: string | undefined): boolean {
  if (list !== undefined && list !== null && list.length > 0 && !list.includes(value)) return false;
  if (pattern !== undefined && !patternMatcher(pattern)(value)) return false;
  if (prefix !== undefined && !prefix.split("|").some((p) => value.startsWith(p))) return false;
  return true;
}

export const DEFAULT_POOL = "default_pool";
export const DEFAULT_QUEUE = "default";

export function taskInstanceListFromQuery(q: TaskInstancesQueryInput, dagIds: readonly string[] | null, runIds: readonly string[] | null): TaskInstanceListQuery {
  const none =
    q.task_group_id ?? q.executor ?? q.operator ?? q.operator_name_pattern ?? q.operator_name_prefix_pattern ?? q.rendered_map_index_pattern ?? q.rendered_map_index_prefix_pattern;
  const matchNone =
    none !== undefined ||
    (q.map_index !== undefined && !q.map_index.includes(-1)) ||
    !keepsAll(DEFAULT_POOL, q.pool, q.pool_name_pattern, q.pool_name_prefix_pattern) ||
    !keepsAll(DEFAULT_QUEUE, q.queue, q.queue_name_pattern, q.queue_name_prefix_pattern);
  return {
    dagIds,
    runIds,
    ...(q.task_id !== undefined && { taskIds: [q.task_id] }),
    limit: q.limit,
    offset: q.offset,
    ...(matchNone && { matchNone }),
    states: q.state,
    runAfter: rangeOf(q, "run_after"),
    logicalDate: rangeOf(q, "logical_date"),
    startDate: rangeOf(q, "start_date"),
    endDate: rangeOf(q, "end_date"),
    updatedAt: rangeOf(q, "updated_at"),
    duration: rangeOf(q, "duration"),
    tryNumbers: q.try_number,
    versionNumbers: q.version_number,
    taskIdPattern: q.task_display_name_pattern,
    taskIdPrefix: q.task_display_name_prefix_pattern,
    dagIdPattern: q.dag_id_pattern,
    dagIdPrefix: q.dag_id_prefix_pattern,
    runIdPattern: q.run_id_pattern,
    runIdPrefix: q.run_id_prefix_pattern,
    orderBy: sortKeys(q.order_by, TASK_INSTANCE_SORT_FIELDS),
  };
}

/** TaskInstancesBatchBody: dag_ids and dag_run_ids within the path's (or any, for `~`). */
export function taskInstanceListFromBatch(
  body: z.infer<typeof taskInstancesBatchBody>,
  pathDagIds: readonly string[] | null,
  pathRunIds: readonly string[] | null,
): TaskInstanceListQuery {
  const order = batchOrder(body.order_by, TASK_INSTANCE_ORDER_FIELDS);
  const states = body.state?.filter((s): s is TaskState => s !== null);
  const matchNone =
    (body.executor !== undefined && body.executor !== null && body.executor.length > 0) ||
    !keepsAll(DEFAULT_POOL, body.pool, undefined, undefined) ||
    !keepsAll(DEFAULT_QUEUE, body.queue, undefined, undefined);
  return {
    dagIds: within(body.dag_ids, pathDagIds),
    runIds: within(body.dag_run_ids, pathRunIds),
    ...(body.task_ids !== undefined && body.task_ids !== null && { taskIds: body.task_ids }),
    limit: body.page_limit,
    offset: body.page_offset,
    ...(matchNone && { matchNone }),
    ...(states !== undefined && states.length > 0 && { states }),
    runAfter: rangeOf(body, "run_after"),
    logicalDate: rangeOf(body, "logical_date"),
    startDate: rangeOf(body, "start_date"),
    endDate: rangeOf(body, "end_date"),
    duration: rangeOf(body, "duration"),
    orderBy: sortKeys(order, TASK_INSTANCE_SORT_FIELDS),
  };
}
