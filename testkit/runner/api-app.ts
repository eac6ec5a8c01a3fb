// Mounts the stand's app (API + web view, src/server/app.ts) on an ephemeral 127.0.0.1 port over a
// given engine, for the API, CLI and web tests. Every answer `call` gets from a route Airflow has is
// checked against Airflow's own OpenAPI document (airflow-contract.ts) and fails the test if invalid.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import pino from "pino";
import { Registry } from "prom-client";
import { type RunnerApp, type LoginConfig, type LoginThrottle, type ProblemBody } from "../../src/api/index.ts";
import type { RunnerService } from "../../src/runner/index.ts";
import { createStandApp } from "../../src/server/index.ts";
import { checkAgainstAirflow } from "./airflow-contract.ts";

export const TEST_TOKEN = "test-token-0123456789";
export const TEST_USER = { username: "tester", password: "tester-password-1" };
export const TEST_LOGIN: LoginConfig = {
  jwtSecret: "test-jwt-secret-0123456789abcdef0123456789",
  tokenTtlSeconds: 3600,
  users: [TEST_USER, { username: "second", password: "second-password-2" }],
};

export interface ApiHarness {
  app: RunnerApp;
  baseUrl: string;
  close(): Promise<void>;
}

export interface StartApiOptions {
  login?: LoginConfig;
  loginThrottle?: LoginThrottle;
  /** As a runner listening beyond loopback: every route but login and health needs credentials. */
  credentialsEverywhere?: boolean;
  /** runner.api.test_connection: whether POST /api/v2/connections/test reaches systems (disabled when omitted). */
  testConnection?: "enabled" | "disabled";
  /** runner.api.expose_config: whether GET /api/v2/config answers (403 when omitted). */
  exposeConfig?: "false" | "non-sensitive-only";
}

export async function startApi(runner: RunnerService, registry: Registry = new Registry(), options: StartApiOptions = {}): Promise<ApiHarness> {
  const shutdown = new AbortController();
  const app = createStandApp({
    runner,
    token: TEST_TOKEN,
    login: options.login ?? TEST_LOGIN,
    loginThrottle: options.loginThrottle,
    credentialsEverywhere: options.credentialsEverywhere,
    testConnection: options.testConnection,
    exposeConfig: options.exposeConfig,
    logger: pino({ level: "silent" }),
    metricsRegistry: registry,
    shutdownSignal: shutdown.signal,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    app,
    baseUrl: `http://127.0.0.1:${port}`,
    async close() {
      shutdown.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

export const auth = { Authorization: `Bearer ${TEST_TOKEN}` };

/** One HTTP call; body is the parsed JSON typed as the caller expects (undefined when not JSON). An
 * answer of a route Airflow has must validate against Airflow's document (unless airflowCheck: false). */
export async function call<T = ProblemBody>(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; airflowCheck?: boolean } = {},
): Promise<{ status: number; body: T; text: string; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (options.airflowCheck !== false) {
    const contentType = response.headers.get("content-type") ?? "";
    const isJson = /^application\/([\w.+-]+\+)?json/.test(contentType);
    const check = checkAgainstAirflow(method, path, response.status, contentType, isJson ? parsed : text);
    assert.deepEqual(check.errors, [], `${method} ${path.slice(0, 120)} answered ${response.status}, which Airflow's document refuses (${check.operation}): ${text.slice(0, 400)}`);
  }
  return { status: response.status, body: parsed as T, text, headers: response.headers };
}

/** A problem's text: its detail, or (a 422, whose detail is FastAPI's list) its errors joined. */
export function problemText(problem: ProblemBody): string {
  if (typeof problem.detail === "string") return problem.detail;
  return (problem.errors ?? []).map((e) => `${e.field}: ${e.message}`).join("; ");
}
