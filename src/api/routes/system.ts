// GET /api/v2/system/schema: the schema ledger against sql/ddl/ (drift per file) and the probed
// ClickHouse platform. Mounted by src/api/app.ts beside the runner's own routes.
import pg from "pg";
import { z } from "zod";
import type { ApiContext } from "../api/context.ts";
import { ApiProblem } from "../api/problem.ts";
import { defineRoute, type RouteSpec } from "../api/route.ts";
import { VariableNotFoundError, pgErrorCode } from "../runner/errors.ts";
import { WORLD_POSITION_KEY } from "./world-position.ts";
import { currentDdlFiles, PG_UNDEFINED_TABLE, readWorldBuild, runnerDatabaseUrl } from "./schema-ledger.ts";
import { compareWithBuild, probePlatform, summarize, type SchemaStatus } from "./schema-status.ts";

const checksum = z.string().nullable();
const schemaStatusResponse = z.object({
  status: z.enum(["in_sync", "drift", "no_build"]),
  drift: z.boolean().describe("true when any file is changed, new or removed against the world's build"),
  world_position: z.string().nullable(),
  build: z
    .object({ dag_id: z.string(), dag_run_id: z.string(), applied_at: z.string(), server_version: z.string() })
    .nullable()
    .describe("the run whose applied DDL is the world's build (the latest run that applied DDL)"),
  summary: z.object({ unchanged: z.number().int(), changed: z.number().int(), new: z.number().int(), removed: z.number().int() }),
  files: z.array(
    z.object({
      file: z.string(),
      drift: z.enum(["changed", "new", "removed"]).nullable(),
      current_checksum: checksum.describe("sha256 of the file in sql/ddl/ now; null when removed"),
      built_checksum: checksum.describe("sha256 the world was built with; null when never applied"),
      applied_at: z.string().nullable(),
      dag_run_id: z.string().nullable(),
      task_id: z.string().nullable(),
      server_version: z.string().nullable(),
    }),
  ),
  platform: z.object({
    node: z.string(),
    version: z.string().nullable(),
    has_sql_roles: z.boolean().nullable(),
    has_json_functions: z.boolean().nullable(),
    has_date_time64: z.boolean().nullable(),
    has_sql_dictionaries: z.boolean().nullable(),
    error: z.string().nullable(),
  }),
  note: z.string(),
});

async function worldPosition(context: ApiContext): Promise<string | null> {
  try {
    return (await context.runner.getVariable(WORLD_POSITION_KEY)).value;
  } catch (err) {
    if (err instanceof VariableNotFoundError) return null;
    throw err;
  }
}

/** One small pool for the ledger, opened on first use and closed when the server shuts down. */
function lazyLedgerPool(context: ApiContext): () => pg.Pool {
  let pool: pg.Pool | undefined;
  return () => {
    if (pool) return pool;
    const created = new pg.Pool({ connectionString: runnerDatabaseUrl(), max: 2, application_name: "schema-status" });
    created.on("error", (err) => context.logger.warn({ err }, "schema ledger connection failed"));
    context.shutdownSignal.addEventListener("abort", () => void created.end().catch(() => undefined), { once: true });
    pool = created;
    return created;
  };
}

export async function buildSchemaStatus(context: ApiContext, pool: pg.Pool): Promise<SchemaStatus> {
  const [current, position, platform] = await Promise.all([currentDdlFiles(), worldPosition(context), probePlatform()]);
  let build;
  try {
    build = await readWorldBuild(pool);
  } catch (err) {
    if (pgErrorCode(err) !== PG_UNDEFINED_TABLE) throw err;
    throw new ApiProblem(503, "the runner database has no schema ledger yet (runner.schema_ledger): start the runner once so it migrates (make up)");
  }
  return summarize(compareWithBuild(current, build), build, position, platform);
}

export function systemRoutes(context: ApiContext): RouteSpec[] {
  const ledgerPool = lazyLedgerPool(context);
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
        res.json(await buildSchemaStatus(context, ledgerPool()));
      },
    }),
  ];
}
