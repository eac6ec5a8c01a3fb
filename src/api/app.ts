// The express app of the runner's REST API (Airflow public API v2 shape). It depends only on the
// RunnerService contract, so tests mount it on an ephemeral port over a real or fake engine. What
// else the process serves (the web view, the world's schema status) is handed in by src/server.
import { randomUUID } from "node:crypto";
import express, { type Express, type Router } from "express";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { RunnerService } from "../runner/index.ts";
import { Authenticator, type LoginConfig } from "./auth.ts";
import { LoginThrottle } from "./login-throttle.ts";
import { requireCredentialsEverywhere } from "./open-listen.ts";
import type { ApiContext, ConnectionSources } from "./context.ts";
import { recordRequestMetrics } from "./metrics.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import { ApiProblem, errorHandler } from "./problem.ts";
import { mountRoutes, type RouteSpec } from "./route.ts";
import { dagRunRoutes } from "./routes/dag-runs.ts";
import { dagRunActionRoutes } from "./routes/dag-run-actions.ts";
import { dagInfoRoutes } from "./routes/dag-info.ts";
import { dagParsingRoutes } from "./routes/dag-parsing.ts";
import { dagVersionRoutes } from "./routes/dag-versions.ts";
import { airflowListRoutes } from "./routes/airflow-lists.ts";
import { notServedRoutes } from "./routes/not-served.ts";
import { auditChange } from "./audit.ts";
import { eventLogRoutes } from "./routes/event-logs.ts";
import { jobConfigRoutes } from "./routes/jobs-config.ts";
import { poolRoutes } from "./routes/pools.ts";
import { backfillRoutes } from "./routes/backfills.ts";
import { xcomRoutes } from "./routes/xcom.ts";
import { taskInstanceExtraRoutes } from "./routes/task-instance-extras.ts";
import { taskInstanceChangeRoutes } from "./routes/task-instance-changes.ts";
import { taskGroupRoutes } from "./routes/task-groups.ts";
import { dagRoutes } from "./routes/dags.ts";
import { importErrorRoutes } from "./routes/import-errors.ts";
import { loginRoutes } from "./routes/login.ts";
import { authPageRoutes } from "./routes/auth-pages.ts";
import { monitorRoutes } from "./routes/monitor.ts";
import { taskInstanceRoutes } from "./routes/task-instances.ts";
import { variableRoutes } from "./routes/variables.ts";
import { variableBulkRoutes } from "./routes/variables-bulk.ts";
import { connectionRoutes } from "./routes/connections.ts";
import { systemRoutes } from "./routes/system.ts";
import { API_VERSION } from "./version.ts";
import type { SchemaStatusResponse } from "./schemas.ts";

export { AIRFLOW_API_VERSION, API_VERSION } from "./version.ts";
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

export interface CreateAppOptions {
  runner: RunnerService;
  token: string;
  /** Users and signing key for POST /auth/token (runner.auth); login answers 401 when absent. */
  login?: LoginConfig;
  /** Counts of wrong passwords (the server's lives in Postgres, shared by a pool); in memory when omitted. */
  loginThrottle?: LoginThrottle;
  /** Every route but login and health needs credentials (a runner listening beyond loopback: src/api/open-listen.ts). */
  credentialsEverywhere?: boolean;
  logger: Logger;
  /** The engine's registry; the API adds its request metrics to it. A private one when omitted. */
  metricsRegistry?: Registry;
  shutdownSignal?: AbortSignal;
  bodyLimitBytes?: number;
  /** The configuration GET /api/v2/config shows, secrets masked (runner.api.expose_config); 403 when absent. */
  exposedConfig?: () => unknown;
  /** The world's schema status for GET /api/v2/system/schema (503 when absent). */
  schemaStatus?: () => Promise<SchemaStatusResponse>;
  /** Routers mounted after the API's routes and before its 404 (the web view). */
  routers?: readonly Router[];
  /** Further route declarations (the world's, from src/server), mounted and documented like the API's own. */
  routes?: readonly RouteSpec[];
  /** The stand's read-only connections and the connection tester (src/server); none and disabled when omitted. */
  connections?: ConnectionSources;
}

export interface RunnerApp extends Express {
  /** The route declarations the app mounted (the OpenAPI document is written from them). */
  readonly routeSpecs: readonly RouteSpec[];
}

export function createApp(options: CreateAppOptions): RunnerApp {
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const auth = new Authenticator(options.token, options.login);
  const context: ApiContext = {
    runner: options.runner,
    auth,
    loginThrottle: options.loginThrottle ?? LoginThrottle.inMemory(),
    dags: { fileToken: (fileloc) => auth.fileToken(fileloc) },
    logger: options.logger,
    metricsRegistry: options.metricsRegistry ?? new Registry(),
    shutdownSignal: options.shutdownSignal ?? new AbortController().signal,
    schemaStatus: options.schemaStatus,
    connections: options.connections ?? { readOnly: () => [] },
    exposedConfig: options.exposedConfig,
  };
  let document: Record<string, unknown> | undefined;
  const specs: RouteSpec[] = [
    ...loginRoutes(context),
    ...authPageRoutes(),
    // before the routes whose paths they share a prefix with ({map_index} would take "state-store")
    ...notServedRoutes(),
    ...xcomRoutes(context), // …/taskInstances/{task_id}/xcomEntries before {task_id}/{map_index}
    ...dagRoutes(context),
    ...dagInfoRoutes(context),
    ...dagVersionRoutes(context),
    ...importErrorRoutes(context),
    ...dagParsingRoutes(context),
    ...dagRunRoutes(context),
    ...dagRunActionRoutes(context),
    ...taskInstanceRoutes(context),
    ...taskInstanceExtraRoutes(context),
    ...taskInstanceChangeRoutes(context),
    ...taskGroupRoutes(context),
    ...variableRoutes(context),
    ...variableBulkRoutes(context),
    ...connectionRoutes(context),
    ...systemRoutes(context),
    ...airflowListRoutes(context),
    ...eventLogRoutes(context),
    ...jobConfigRoutes(context),
    ...poolRoutes(context),
    ...backfillRoutes(context),
    ...(options.routes ?? []),
    ...monitorRoutes(context, () => (document ??= buildOpenApiDocument(specs, { version: API_VERSION }))),
  ];

  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use((req, res, next) => {
    const requestId = randomUUID();
    res.locals.requestId = requestId;
    res.setHeader("X-Request-Id", requestId);
    next();
  });
  app.use(recordRequestMetrics(context.metricsRegistry));
  if (options.credentialsEverywhere === true) app.use(requireCredentialsEverywhere(auth, context.loginThrottle));

  const router = express.Router();
  mountRoutes(router, specs, { requireToken: auth.requireToken(), bodyLimitBytes, onChange: auditChange(context) });
  app.use(router);
  for (const extra of options.routers ?? []) app.use(extra);

  app.use((req, _res, next) => {
    next(new ApiProblem(404, `no route ${req.method} ${req.path}; the routes are listed at /api/v2/openapi.json`));
  });
  app.use(errorHandler(options.logger, bodyLimitBytes));
  return Object.assign(app, { routeSpecs: specs });
}
