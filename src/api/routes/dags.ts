// GET /api/v2/dags, GET and PATCH /api/v2/dags/{dag_id}, GET .../details: the DAGs the runner knows,
// and pausing.
import { patternMatcher } from "../airflow-pattern.ts";
import type { ApiContext } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { dagCollection, dagDetailsResponse, dagPatchBody, dagPatchQuery, dagPathParams, dagResponse, listDagsQuery, pageOf } from "../schemas.ts";
import { serializeDag, serializeDagDetails } from "../serialize.ts";

const unknownDag = { description: "Unknown DAG" };

export function dagRoutes({ runner, dags: dagContext }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/dags",
      operationId: "get_dags",
      summary: "List DAGs",
      tag: "DAG",
      auth: false,
      query: listDagsQuery,
      responses: { 200: { description: "DAGs, sorted by id (stale ones only with exclude_stale=false)", schema: dagCollection, schemaName: "DAGCollectionResponse" } },
      async handle({ query, res }) {
        const matches = patternMatcher(query.dag_id_pattern);
        const all = (await runner.listDags())
          .filter((dag) => query.paused === undefined || dag.isPaused === query.paused)
          .filter((dag) => !(query.exclude_stale && dag.isStale))
          .filter((dag) => matches(dag.dagId))
          .sort((a, b) => a.dagId.localeCompare(b.dagId));
        if (query.order_by?.[0] === "-dag_id") all.reverse();
        res.json({ dags: pageOf(all, query).map((dag) => serializeDag(dag, dagContext)), total_entries: all.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}",
      operationId: "get_dag",
      summary: "Get a DAG",
      tag: "DAG",
      auth: false,
      params: dagPathParams,
      responses: { 200: { description: "The DAG", schema: dagResponse, schemaName: "DAGResponse" }, 404: unknownDag },
      async handle({ params, res }) {
        res.json(serializeDag(await runner.getDag(params.dag_id), dagContext));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/details",
      operationId: "get_dag_details",
      summary: "Get a DAG with its details (params, timezone, active runs)",
      tag: "DAG",
      auth: false,
      params: dagPathParams,
      responses: { 200: { description: "The DAG's details", schema: dagDetailsResponse, schemaName: "DAGDetailsResponse" }, 404: unknownDag },
      async handle({ params, res }) {
        const dag = await runner.getDag(params.dag_id);
        const running = await runner.listRuns(params.dag_id, { limit: 1, offset: 0, state: "running" });
        res.json(serializeDagDetails(dag, { ...dagContext, activeRuns: running.totalEntries }));
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags/{dag_id}",
      operationId: "patch_dag",
      summary: "Pause or unpause a DAG",
      description: "Airflow's DAGPatchBody; update_mask may name only is_paused.",
      tag: "DAG",
      auth: true,
      params: dagPathParams,
      query: dagPatchQuery,
      body: dagPatchBody,
      bodySchemaName: "DAGPatchBody",
      responses: { 200: { description: "The DAG after the change", schema: dagResponse, schemaName: "DAGResponse" }, 404: unknownDag },
      async handle({ params, body, res }) {
        res.json(serializeDag(await runner.setPaused(params.dag_id, body.is_paused), dagContext));
      },
    }),
  ];
}
