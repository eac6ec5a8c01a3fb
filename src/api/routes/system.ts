// GET /api/v2/system/schema: the schema ledger against sql/ddl/ (drift per file) and the probed
// ClickHouse platform. The status itself comes from the world (src/world/schema-status.ts), which
// the server's wiring (src/server/app.ts) puts into the context; this module only serves it.
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { schemaStatusResponse } from "../schemas.ts";

export function systemRoutes(context: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/system/schema",
      operationId: "get_schema_status",
      summary: "The world's schema: sql/ddl/ against the DDL the world was built with (drift per file), and the ClickHouse platform",
      description:
        "make up never applies changed DDL to a ready world; this shows the difference. drift is true when a file is changed, new or removed.",
      tag: "System",
      auth: false,
      responses: {
        200: { description: "Schema status", schema: schemaStatusResponse, schemaName: "SchemaStatusResponse" },
        503: { description: "The runner database (or its ledger table) is not available" },
      },
      async handle({ res }) {
        if (!context.schemaStatus) throw new ApiProblem(503, "this server has no world wired in: the schema status comes from the stand's runner (src/server)");
        res.json(await context.schemaStatus());
      },
    }),
  ];
}
