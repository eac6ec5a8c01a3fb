// Mounts the stand's app (API + web view, src/server/app.ts) on an ephemeral 127.0.0.1 port over a
// given engine, for the API, CLI and web tests.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import pino from "pino";
import { Registry } from "prom-client";
import type { RunnerApp } from "../../src/api/app.ts";
import type { ProblemBody } from "../../src/api/problem.ts";
import type { RunnerService } from "../../src/runner/service.ts";
import { createStandApp } from "../../src/server/app.ts";

export const TEST_TOKEN = "test-token-0123456789";

export interface ApiHarness {
  app: RunnerApp;
  baseUrl: string;
  close(): Promise<void>;
}

export async function startApi(runner: RunnerService, registry: Registry = new Registry()): Promise<ApiHarness> {
  const shutdown = new AbortController();
  const app = createStandApp({ runner, token: TEST_TOKEN, logger: pino({ level: "silent" }), metricsRegistry: registry, shutdownSignal: shutdown.signal });
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

/** One HTTP call; body is the parsed JSON typed as the caller expects (undefined when not JSON). */
export async function call<T = ProblemBody>(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
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
  return { status: response.status, body: parsed as T, text, headers: response.headers };
}
