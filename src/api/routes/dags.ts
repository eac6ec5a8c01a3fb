// GET /api/v2/dags, GET and PATCH /api/v2/dags/{dag_id}: the DAGs the runner knows, and pausing.
import type { ApiContext } from "../context.ts";
import { defineRoute } from "../route.ts";
import type { RouteSpec } from "../route.ts";
import { dagCollection, dagPatchBody, dagPathParams, dagResponse, listDagsQuery } from "../schemas.ts";
import { serializeDag } from "../serialize.ts";

export function dagRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/dags",
      operationId: "get_dags",
      summary: "List DAGs",
      tag: "DAG",
      auth: false,
      query: listDagsQuery,
      responses: { 200: { description: "DAGs, sorted by id", schema: dagCollection, schemaName: "DAGCollectionResponse" } },
      async handle({ query, res }) {
        const all = (await runner.listDags())
          .filter((dag) => query.paused === undefined || dag.isPaused === (query.paused === "true"))
          .sort((a, b) => a.dagId.localeCompare(b.dagId));
        const page = all.slice(query.offset, query.offset + query.limit);
        res.json({ dags: page.map(serializeDag), total_entries: all.length });
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
      responses: {
        200: { description: "The DAG", schema: dagResponse, schemaName: "DAGResponse" },
        404: { description: "Unknown DAG" },
      },
      async handle({ params, res }) {
        res.json(serializeDag(await runner.getDag(params.dag_id)));
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags/{dag_id}",
      operationId: "patch_dag",
      summary: "Pause or unpause a DAG",
      tag: "DAG",
      auth: true,
      params: dagPathParams,
      body: dagPatchBody,
      bodySchemaName: "DAGPatchBody",
      responses: {
        200: { description: "The DAG after the change", schema: dagResponse, schemaName: "DAGResponse" },
        404: { description: "Unknown DAG" },
      },
      async handle({ params, body, res }) {
        res.json(serializeDag(await runner.setPaused(params.dag_id, body.is_paused)));
      },
    }),
  ];
}
