// What every router module receives: the engine surface, a logger, auth, and process-level signals.
import type { Request } from "express";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ConnectionFields, RunnerService } from "../runner/index.ts";
import type { Authenticator } from "./auth.ts";
import type { LoginThrottle } from "./login-throttle.ts";
import type { SchemaStatusResponse } from "./schemas.ts";
import type { DagSerializeContext } from "./serialize.ts";

/** Reaches the system a connection names and says whether it answered (POST /api/v2/connections/test):
 * Airflow's Connection.test_connection(). The stand's is src/server/connection-tests.ts. */
export type ConnectionTester = (connection: ConnectionFields, signal: AbortSignal) => Promise<{ status: boolean; message: string }>;

/** Where the connections routes find what is not in the runner's table. */
export interface ConnectionSources {
  /** The stand's own services as connections: listed with the stored ones, never changed or deleted. */
  readOnly: () => readonly ConnectionFields[];
  /** Absent: testing connections is disabled (Airflow's core.test_connection = Disabled) and each test call is 403. */
  tester?: ConnectionTester;
}

export interface ApiContext {
  runner: RunnerService;
  connections: ConnectionSources;
  logger: Logger;
  metricsRegistry: Registry;
  auth: Authenticator;
  /** Counts wrong passwords per user name and client address (POST /auth/token). */
  loginThrottle: LoginThrottle;
  /** File tokens, for serialising DAGs. */
  dags: DagSerializeContext;
  /** Aborted when the server shuts down, so long waits answer at once instead of holding it. */
  shutdownSignal: AbortSignal;
  /** The effective configuration GET /api/v2/config shows (masked there); absent: not exposed (403). */
  exposedConfig?: () => unknown;
  /** The world's schema status (GET /api/v2/system/schema); absent where no world is wired in. */
  schemaStatus?: () => Promise<SchemaStatusResponse>;
}

/** Who is calling, for audit fields (variable history, triggered_by). The CLI names itself with
 * the X-Runner-Client header; anything unrecognisable reads as plain "rest". */
export function callerOf(req: Request): string {
  const client = req.headers["x-runner-client"];
  return typeof client === "string" && /^[a-z][a-z0-9_.-]{0,39}$/.test(client) ? client : "rest";
}
