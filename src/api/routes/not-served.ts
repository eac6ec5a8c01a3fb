// Airflow's calls for concepts this runner does not have: assets (and asset-triggered partitions),
// human-in-the-loop tasks and state stores. Each answers 501 with a problem
// naming the concept and what the runner has instead, not a bare 404: a client learns the call
// exists in Airflow and is knowingly not served here (docs/api.md has the whole table).
import { z } from "zod";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

interface Concept {
  name: string;
  why: string;
  calls: readonly (readonly [method: "get" | "post" | "put" | "patch" | "delete", path: string, operationId: string])[];
}

const TI = "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances/{task_id}";

export const NOT_SERVED: readonly Concept[] = [
  {
    name: "assets",
    why: "DAGs here are started by schedules, triggers and waiting triggers, not by asset events",
    calls: [
      ["get", "/api/v2/assets", "get_assets"],
      ["get", "/api/v2/assets/aliases", "get_asset_aliases"],
      ["get", "/api/v2/assets/aliases/{asset_alias_id}", "get_asset_alias"],
      ["get", "/api/v2/assets/events", "get_asset_events"],
      ["post", "/api/v2/assets/events", "create_asset_event"],
      ["post", "/api/v2/assets/{asset_id}/materialize", "materialize_asset"],
      ["get", "/api/v2/assets/{asset_id}/queuedEvents", "get_asset_queued_events"],
      ["delete", "/api/v2/assets/{asset_id}/queuedEvents", "delete_asset_queued_events"],
      ["get", "/api/v2/assets/{asset_id}", "get_asset"],
      ["get", "/api/v2/dags/{dag_id}/assets/queuedEvents", "get_dag_asset_queued_events"],
      ["delete", "/api/v2/dags/{dag_id}/assets/queuedEvents", "delete_dag_asset_queued_events"],
      ["get", "/api/v2/dags/{dag_id}/assets/{asset_id}/queuedEvents", "get_dag_asset_queued_event"],
      ["delete", "/api/v2/dags/{dag_id}/assets/{asset_id}/queuedEvents", "delete_dag_asset_queued_event"],
      ["get", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamAssetEvents", "get_upstream_asset_events"],
      ["post", "/api/v2/dags/{dag_id}/clearPartitions", "clear_dag_run_partitions"],
    ],
  },
  {
    name: "human-in-the-loop tasks",
    why: "no task here waits for a person's answer; an operator marks or clears task instances instead",
    calls: [
      ["get", "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/hitlDetails", "get_hitl_details"],
      ["get", `${TI}/{map_index}/hitlDetails`, "get_hitl_detail"],
      ["patch", `${TI}/{map_index}/hitlDetails`, "update_hitl_detail"],
      ["get", `${TI}/{map_index}/hitlDetails/tries/{try_number}`, "get_hitl_detail_try_detail"],
    ],
  },
  {
    name: "state stores",
    why: "tasks keep state in Variables (with their history) and in the world's own databases",
    calls: [
      ["get", "/api/v2/assets/{asset_id}/state-store", "list_asset_state_store"],
      ["delete", "/api/v2/assets/{asset_id}/state-store", "clear_asset_state_store"],
      ["get", "/api/v2/assets/{asset_id}/state-store/{key}", "get_asset_state_store"],
      ["put", "/api/v2/assets/{asset_id}/state-store/{key}", "set_asset_state_store"],
      ["delete", "/api/v2/assets/{asset_id}/state-store/{key}", "delete_asset_state_store"],
      ["get", `${TI}/state-store`, "list_task_state_store"],
      ["delete", `${TI}/state-store`, "clear_task_state_store"],
      ["get", `${TI}/state-store/{key}`, "get_task_state_store"],
      ["put", `${TI}/state-store/{key}`, "set_task_state_store"],
      ["patch", `${TI}/state-store/{key}`, "patch_task_state_store"],
      ["delete", `${TI}/state-store/{key}`, "delete_task_state_store"],
    ],
  },
];

/** The path's parameters, any text: the answer is 501 whatever they are. */
function anyParams(path: string): z.ZodObject {
  const names = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1] ?? "");
  return z.object(Object.fromEntries(names.map((n) => [n, z.string()]))).strict();
}

export function notServedRoutes(): RouteSpec[] {
  return NOT_SERVED.flatMap((concept) =>
    concept.calls.map(([method, path, operationId]) =>
      defineRoute({
        method,
        path,
        operationId,
        summary: `Not served: ${concept.name}`,
        description: `Airflow's ${operationId}. This runner has no ${concept.name}: ${concept.why}. Answers 501.`,
        tag: "Not served",
        auth: method !== "get", // a change is asked with credentials, as every change here; then 501
        audit: false,
        params: anyParams(path),
        query: z.object({}).catchall(z.unknown()),
        ...(method === "get" || method === "delete" ? {} : { body: z.unknown() }),
        responses: { 501: { description: `This runner has no ${concept.name}` } },
        handle() {
          throw new ApiProblem(501, `${operationId}: this runner has no ${concept.name} (${concept.why}); see docs/api.md for what is served`);
        },
      }),
    ),
  );
}
