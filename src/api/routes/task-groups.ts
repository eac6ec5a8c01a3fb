// Airflow's PATCH of a task group's task instances, and its dry run. This runner has no TaskGroup
// object: Airflow names a group's tasks `group_id.task_id` (prefix_group_id; a nested group's
// `outer.inner.task`), and task ids here may hold dots, so a task group here is the run's task
// instances whose task id starts with `{group_id}.` (`grp` holds `grp.a` and `grp.inner.b`, not
// `grpX.a`). Each member is patched as PATCH …/taskInstances/{task_id} patches one.
import type { z } from "zod";
import { type ApiContext, callerOf } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { patchTaskInstanceBody, patchTaskInstanceQuery, runPathParams, taskIdSchema, taskInstanceCollection, type TaskInstanceResponse } from "../schemas.ts";
import { serializeTaskInstance } from "../serialize.ts";
import { taskInstancePatchOf } from "./task-instances.ts";
import type { DagRunRecord, RunnerService, TaskInstanceMark, TaskInstanceRecord } from "../../runner/index.ts";

const GROUP = "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskGroupInstances/{group_id}";
const groupParams = runPathParams.extend({ group_id: taskIdSchema }).strict();
type GroupParams = z.output<typeof groupParams>;
const collection = { schema: taskInstanceCollection, schemaName: "TaskInstanceCollectionResponse" };
const notFound = { description: "Unknown DAG or run, or no task of the run is in the group" };

/** The group's task instances in the run, in the DAG's order (a task the run's version dropped, removed, is
 * not one); 404 naming group_id when there are none, as Airflow's "No task instances found for task group". */
async function groupIn(runner: RunnerService, p: GroupParams): Promise<{ run: DagRunRecord; members: TaskInstanceRecord[] }> {
  const run = await runner.getRun(p.dag_id, p.dag_run_id);
  const prefix = `${p.group_id}.`;
  const members = (await runner.listTaskInstances(p.dag_id, p.dag_run_id)).filter((ti) => ti.taskId.startsWith(prefix) && ti.state !== "removed");
  if (members.length === 0) {
    throw new ApiProblem(404, `task group '${p.group_id}' has no task in run ${p.dag_id}/${p.dag_run_id}: a group's tasks are the ones named '${prefix}<task>'`, {
      field: "group_id",
    });
  }
  return { run, members };
}

/** The members a patch changes, as Airflow's set_task_group_state picks them: with a state, those
 * not in it already; with only a note, every member. */
function changedBy(members: readonly TaskInstanceRecord[], patch: { state?: TaskInstanceMark }): TaskInstanceRecord[] {
  return patch.state === undefined ? [...members] : members.filter((ti) => ti.state !== patch.state);
}

function answerOf(tis: readonly TaskInstanceRecord[], run: DagRunRecord): { task_instances: TaskInstanceResponse[]; total_entries: number } {
  return { task_instances: tis.map((ti) => serializeTaskInstance(ti, run)), total_entries: tis.length };
}

export function taskGroupRoutes({ runner }: ApiContext): RouteSpec[] {
  const membership =
    "A task group here is the run's task instances whose task id starts with '{group_id}.' (Airflow's prefixed task " +
    "ids; nested groups too: 'outer' holds 'outer.inner.t'); 404 when the run has none.";
  return [
    defineRoute({
      method: "patch",
      path: GROUP,
      operationId: "patch_task_group_instances",
      summary: "Mark every task instance of a task group, and/or set their note",
      description:
        `${membership} Each member is patched as PATCH …/taskInstances/{task_id} patches one, downstream members first: ` +
        "new_state marks the members not already in it (409 when every member is), note goes on every member, " +
        "update_mask limits which body fields apply; include_upstream/downstream/future/past are not supported (422). " +
        "The answer: the members marked (with only a note, every member) in the DAG's order, after the change. The event " +
        "log keeps the call, the group in its extra.",
      tag: "Task Instance",
      auth: true,
      params: groupParams,
      query: patchTaskInstanceQuery.pick({ update_mask: true }).strict(),
      body: patchTaskInstanceBody,
      bodySchemaName: "PatchTaskInstanceBody",
      responses: { 200: { description: "The task instances changed", ...collection }, 404: notFound, 409: { description: "Every task instance of the group is in new_state already" } },
      async handle({ params, query, body, req, res }) {
        const patch = taskInstancePatchOf(query, body);
        const { members } = await groupIn(runner, params);
        const changed = new Set(changedBy(members, patch).map((ti) => ti.taskId));
        if (patch.state !== undefined && changed.size === 0) {
          throw new ApiProblem(409, `every task instance of task group '${params.group_id}' in run ${params.dag_id}/${params.dag_run_id} is ${patch.state} already`, { field: "new_state" });
        }
        // downstream first (members come in the run's topological order): a member marked done never releases
        // another member to start before that one is marked too, as Airflow marks them all in one transaction
        for (const ti of [...members].reverse()) {
          const state = changed.has(ti.taskId) ? patch.state : undefined;
          if (state === undefined && patch.note === undefined) continue;
          await runner.patchTaskInstance(params.dag_id, params.dag_run_id, ti.taskId, { state, note: patch.note }, { by: callerOf(req) });
        }
        const run = await runner.getRun(params.dag_id, params.dag_run_id);
        const after = await runner.listTaskInstances(params.dag_id, params.dag_run_id);
        res.json(answerOf(after.filter((ti) => changed.has(ti.taskId)), run));
      },
    }),
    defineRoute({
      method: "patch",
      path: `${GROUP}/dry_run`,
      operationId: "patch_task_group_instances_dry_run",
      summary: "The task instances of a task group a PATCH would change, unchanged",
      description:
        `${membership} With new_state, the members not in it already (none: an empty list); with only a note, every ` +
        "member. Nothing changes and nothing is written to the event log. As Airflow's, it takes no update_mask.",
      tag: "Task Instance",
      auth: true,
      params: groupParams,
      body: patchTaskInstanceBody,
      bodySchemaName: "PatchTaskInstanceBody",
      responses: { 200: { description: "The task instances a PATCH would change, as they are now", ...collection }, 404: notFound },
      async handle({ params, body, res }) {
        const { run, members } = await groupIn(runner, params);
        res.json(answerOf(changedBy(members, taskInstancePatchOf({}, body)), run));
      },
    }),
  ];
}
