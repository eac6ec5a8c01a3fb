// GET /api/v2/dags/{dag_id}/dagVersions and .../dagVersions/{version_number}: the versions of a DAG
// (Airflow's DagVersion), one per change of its structure or code, as the runner keeps them.
import type { ApiContext } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { dagPathParams, dagVersionCollection, dagVersionPathParams, dagVersionResponse, dagVersionsQuery } from "../schemas.ts";
import { serializeDagVersion } from "../serialize.ts";

export function dagVersionRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagVersions",
      operationId: "get_dag_versions",
      summary: "List a DAG's versions",
      description:
        "Oldest first (order_by=-version_number or -id: newest first). A version's bundle is the DAG folder it was parsed " +
        "from (dags-folder: the repository's dags/; stand-dags: the stand's <state_dir>/dags), unversioned: bundle_version " +
        "is null, so any bundle_version gives an empty page. The '~' form (every DAG) is not served.",
      tag: "DagVersion",
      auth: false,
      params: dagPathParams,
      query: dagVersionsQuery,
      responses: {
        200: { description: "One page of versions", schema: dagVersionCollection, schemaName: "DAGVersionCollectionResponse" },
        404: { description: "Unknown DAG" },
      },
      async handle({ params, query, res }) {
        if (query.bundle_version !== undefined) {
          await runner.getDag(params.dag_id); // an unknown DAG is still 404
          res.json({ dag_versions: [], total_entries: 0 });
          return;
        }
        const page = await runner.listDagVersions(params.dag_id, {
          limit: query.limit,
          offset: query.offset,
          versionNumber: query.version_number,
          ...(query.bundle_name !== undefined && { bundleName: query.bundle_name }),
          descending: (query.order_by[0] ?? "id").startsWith("-"),
        });
        res.json({ dag_versions: page.items.map(serializeDagVersion), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagVersions/{version_number}",
      operationId: "get_dag_version",
      summary: "Get one version of a DAG",
      tag: "DagVersion",
      auth: false,
      params: dagVersionPathParams,
      responses: {
        200: { description: "The version", schema: dagVersionResponse, schemaName: "DagVersionResponse" },
        404: { description: "Unknown DAG or version" },
      },
      async handle({ params, res }) {
        res.json(serializeDagVersion(await runner.getDagVersion(params.dag_id, params.version_number)));
      },
    }),
  ];
}
