// Connections: Airflow's CRUD routes over the runner's table, with the stand's own services listed
// beside the stored ones as read-only connections (src/server hands them in). Reads mask passwords
// and secret-looking extra keys; a body that sends a masked value back keeps the stored one.
import { ReadOnlyError, sortKeys, CONNECTION_SORT_FIELDS } from "../../runner/index.ts";
import type { ApiContext } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import {
  applyBody,
  assertIdMatches,
  connectionBody,
  connectionCollection,
  connectionPathParams,
  connectionPatchQuery,
  connectionResponse,
  connectionsQuery,
  fieldsOfBody,
  serializeConnection,
} from "./connection-bodies.ts";
import { connectionBulkRoutes } from "./connections-bulk.ts";
import { connectionTestRoutes } from "./connection-tests.ts";
import { connectionLookup, readOnlyConnection } from "./connection-lookup.ts";

const connectionSchema = { schema: connectionResponse, schemaName: "ConnectionResponse" };

export function connectionRoutes(context: ApiContext): RouteSpec[] {
  const { runner, connections } = context;
  const lookup = connectionLookup(context);
  return [
    // the literal paths (test, enqueue-test, defaults) before {connection_id}, which would take them
    ...connectionTestRoutes(context),
    defineRoute({
      method: "post",
      path: "/api/v2/connections/defaults",
      operationId: "create_default_connections",
      summary: "Create default connections",
      description:
        "Airflow writes its providers' default connections (airflow_db, aws_default, …) into its table. This runner has " +
        "no providers to use those, so it writes none: its defaults are the stand's own services, which are always " +
        "listed (read-only, ids stand_*). Answers 204, as Airflow.",
      tag: "Connection",
      auth: true,
      responses: { 204: { description: "The stand's connections are present (they always are)" } },
      handle({ res }) {
        res.status(204).end();
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/connections",
      operationId: "get_connections",
      summary: "List connections",
      description:
        "The stand's own services (read_only: true, ids stand_*) and the stored connections, paged together. order_by " +
        "takes several keys (conn_id, connection_id, conn_type, description, host, port, id, team_name; - for " +
        "descending); by id, the stand's come first, then the stored ones in the order they were made. " +
        "connection_id_pattern is ILIKE (| for or), connection_id_prefix_pattern a literal prefix.",
      tag: "Connection",
      auth: false,
      query: connectionsQuery,
      responses: { 200: { description: "One page of connections", schema: connectionCollection, schemaName: "ConnectionCollectionResponse" } },
      async handle({ query: q, res }) {
        const page = await runner.listConnections({
          limit: q.limit,
          offset: q.offset,
          pattern: q.connection_id_pattern,
          prefix: q.connection_id_prefix_pattern,
          orderBy: sortKeys(q.order_by, CONNECTION_SORT_FIELDS),
          alsoListed: connections.readOnly(),
        });
        res.json({ connections: page.items.map(serializeConnection), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/connections",
      operationId: "post_connection",
      summary: "Create a connection",
      description: "409 when the id exists (a stand_* id is the stand's own). The password is kept as given and never shown again.",
      tag: "Connection",
      auth: true,
      body: connectionBody,
      bodySchemaName: "ConnectionBody",
      responses: { 201: { description: "Created", ...connectionSchema }, 409: { description: "The id exists" } },
      async handle({ body, res }) {
        if (lookup.standOne(body.connection_id)) {
          throw new ReadOnlyError("connection_id", `connection '${body.connection_id}' already exists: it is one of the stand's own services (read-only)`);
        }
        res.status(201).json(serializeConnection(await runner.createConnection(fieldsOfBody(body))));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/connections/{connection_id}",
      operationId: "get_connection",
      summary: "Get a connection",
      tag: "Connection",
      auth: false,
      params: connectionPathParams,
      responses: { 200: { description: "The connection, its password masked", ...connectionSchema }, 404: { description: "Unknown id" } },
      async handle({ params, res }) {
        res.json(serializeConnection(await lookup.find(params.connection_id)));
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/connections/{connection_id}",
      operationId: "patch_connection",
      summary: "Change a connection",
      description:
        "The fields the body gives change (only those update_mask names, when given); the others keep their values. A " +
        "password of \"***\" (as reads show it) keeps the stored one, and so do \"***\" values under secret-looking keys of " +
        "extra. The stand's own connections are read-only: 409.",
      tag: "Connection",
      auth: true,
      params: connectionPathParams,
      query: connectionPatchQuery,
      body: connectionBody,
      bodySchemaName: "ConnectionBody",
      responses: {
        200: { description: "The connection after the change", ...connectionSchema },
        400: { description: "The connection_id in the body differs from the path" },
        404: { description: "Unknown id" },
        409: { description: "One of the stand's own connections: read-only" },
      },
      async handle({ params, query, body, res }) {
        assertIdMatches(body, params.connection_id);
        if (lookup.standOne(params.connection_id)) throw readOnlyConnection(params.connection_id);
        const current = await runner.getConnection(params.connection_id);
        const next = applyBody(current, body, query.update_mask);
        res.json(serializeConnection(await runner.updateConnection(next)));
      },
    }),
    defineRoute({
      method: "delete",
      path: "/api/v2/connections/{connection_id}",
      operationId: "delete_connection",
      summary: "Delete a connection",
      description: "The stand's own connections are read-only: 409.",
      tag: "Connection",
      auth: true,
      params: connectionPathParams,
      responses: { 204: { description: "Deleted" }, 404: { description: "Unknown id" }, 409: { description: "One of the stand's own connections: read-only" } },
      async handle({ params, res }) {
        if (lookup.standOne(params.connection_id)) throw readOnlyConnection(params.connection_id);
        await runner.deleteConnection(params.connection_id);
        res.status(204).end();
      },
    }),
    ...connectionBulkRoutes(context),
  ];
}
