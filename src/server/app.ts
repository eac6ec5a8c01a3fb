// The stand's runner process, composed: the REST API (src/api) over the engine's RunnerService, the
// web view (src/web), and the world's schema status (src/world) handed to both. This folder is the
// one place under src/ that joins them (and the only one that may import dags/ or tasks/).
import pg from "pg";
import { createApp, type CreateAppOptions, type RunnerApp, ApiProblem, type SchemaStatusResponse } from "../api/index.ts";
import { VariableNotFoundError, type RunnerService } from "../runner/index.ts";
import { sharedWorldSources, type ServiceView, type SnapshotsView, createWebRouter, worldApiRoutes, kafkaOffsetsReader, readMetricsHistory, readWorldNumbers } from "../web/index.ts";
import { loadStandConfig } from "../config/index.ts";
import { snapshotRows, readRestores } from "../snapshots/index.ts";
import { quietStandContext, standStatus } from "../stand/index.ts";
import { describeLastExit } from "../keeper/index.ts";
import { testConnection } from "./connection-tests.ts";
import { standConnections } from "./stand-connections.ts";
import { WORLD_POSITION_KEY, runnerDatabaseUrl, withRunnerDb, SchemaLedgerMissingError, readSchemaStatus } from "../world/index.ts";

export type StandAppOptions = Omit<CreateAppOptions, "schemaStatus" | "routers" | "routes" | "connections"> & {
  /** The database holding world.schema_ledger; the stand's runner database when omitted. */
  ledgerPgUrl?: string;
  /** runner.api.test_connection: whether POST /api/v2/connections/test reaches systems (disabled when omitted: 403). */
  testConnection?: "enabled" | "disabled";
  /** runner.api.expose_config: non-sensitive-only serves GET /api/v2/config (secrets masked). */
  exposeConfig?: "false" | "non-sensitive-only";
};

async function worldPosition(runner: RunnerService): Promise<string | null> {
  try {
    return (await runner.getVariable(WORLD_POSITION_KEY)).value;
  } catch (err) {
    if (err instanceof VariableNotFoundError) return null;
    throw err;
  }
}

/** The schema status over one small pool, opened on first use and closed at shutdown. */
function schemaStatusSource(options: StandAppOptions): () => Promise<SchemaStatusResponse> {
  let pool: pg.Pool | undefined;
  const ledgerPool = (): pg.Pool => {
    if (pool) return pool;
    const created = new pg.Pool({ connectionString: options.ledgerPgUrl ?? runnerDatabaseUrl(), max: 2, application_name: "schema-status" });
    created.on("error", (err) => options.logger.warn({ err }, "schema ledger connection failed"));
    options.shutdownSignal?.addEventListener("abort", () => void created.end().catch(() => undefined), { once: true });
    pool = created;
    return created;
  };
  return async () => {
    try {
      return await readSchemaStatus(ledgerPool(), await worldPosition(options.runner));
    } catch (err) {
      if (err instanceof SchemaLedgerMissingError) throw new ApiProblem(503, err.message);
      throw err;
    }
  };
}

/** The stand's services as `make check-services` sees them, with the keeper's records. */
async function standServiceViews(): Promise<ServiceView[]> {
  const { services } = await standStatus(quietStandContext());
  return services.map((s) => ({
    name: s.name,
    healthy: s.healthy,
    detail: s.detail,
    state: s.kept?.state ?? null,
    restarts: s.kept?.restarts ?? null,
    lastExit: describeLastExit(s.kept?.lastExit),
  }));
}

/** The world snapshots and the last restores, for the World page and GET /api/v2/world/snapshots. */
async function worldSnapshotViews(): Promise<SnapshotsView> {
  const config = loadStandConfig();
  const [snapshots, restores] = await Promise.all([snapshotRows(config), withRunnerDb((db) => readRestores(db, 10), "world-snapshots")]);
  return { snapshots, restores: restores.map((r) => ({ snapshot: r.snapshot, fromPosition: r.fromPosition, toPosition: r.toPosition, runId: r.runId, restoredAt: r.restoredAt ?? null })) };
}

/** How long the World page's sources keep an answer (a refresh reads its JSON twin, then its HTML). */
export const WORLD_SOURCES_TTL_MS = 1000;

/** The API with the web view and the world's schema status mounted: what the runner process serves. */
export function createStandApp(options: StandAppOptions): RunnerApp {
  const schemaStatus = schemaStatusSource(options);
  const kafka = kafkaOffsetsReader();
  options.shutdownSignal?.addEventListener("abort", () => void kafka.close(), { once: true });
  const world = sharedWorldSources(
    { numbers: (days) => readWorldNumbers({ days }), kafka: kafka.read, schema: schemaStatus, services: standServiceViews, snapshots: worldSnapshotViews, metrics: () => readMetricsHistory(loadStandConfig()) },
    WORLD_SOURCES_TTL_MS,
  );
  const web = createWebRouter({ runner: options.runner, logger: options.logger, schemaStatus, world });
  const { testConnection: testing, exposeConfig, ...appOptions } = options;
  const connections = { readOnly: () => standConnections(loadStandConfig()), tester: testing === "enabled" ? testConnection : undefined };
  return createApp({ ...appOptions, schemaStatus, routers: [web], routes: worldApiRoutes(options.runner, world), connections,
    ...(exposeConfig === "non-sensitive-only" && { exposedConfig: () => loadStandConfig() }) });
}
