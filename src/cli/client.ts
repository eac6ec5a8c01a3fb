// A small HTTP client of the runner's REST API for the CLI: JSON in and out, problem JSON turned
// into readable errors, and an unreachable API named with what to do about it.

import { errorCause, errorCode } from "../errors.ts";

/** Exit codes of the CLI: a failed run is 1; usage, connection and API errors are 2. */
export const EXIT = Object.freeze({ OK: 0, RUN_FAILED: 1, USAGE: 2, WAIT_TIMEOUT: 3 });

/** An error the CLI prints as is and exits with its code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.USAGE,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** The API did not answer at all (refused, reset, DNS, timeout). */
export class ApiUnreachableError extends CliError {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(
      `cannot reach the runner API at ${url} (${reason}).\n` +
        "Is the runner running? Start it with 'make up' (or 'npx tsx src/server/main.ts'), " +
        "or point the CLI elsewhere with --api-url <url> (default: runner.api_port in stand.yaml / $STAND_CONFIG).",
    );
    this.name = "ApiUnreachableError";
  }
}

/** The API answered with a 4xx/5xx problem. */
export class ApiResponseError extends CliError {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly method: string,
    readonly url: string,
  ) {
    super(`${method} ${url} answered ${status}: ${detail}`);
    this.name = "ApiResponseError";
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  accept?: string;
  timeoutMs?: number;
}

function reasonOf(err: unknown): string {
  const cause = errorCause(err);
  const code = errorCode(cause);
  if (code !== undefined) return code;
  if (err instanceof Error && err.name === "TimeoutError") return "no answer before the timeout";
  if (cause instanceof Error) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

export class RunnerApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | undefined,
    private readonly defaultTimeoutMs = 30_000,
  ) {}

  urlFor(path: string, query?: RequestOptions["query"]): string {
    const url = new URL(path, this.baseUrl.endsWith("/") ? this.baseUrl : `${this.baseUrl}/`);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  /** Sends one request; resolves with the parsed JSON (or text) of a 2xx answer. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = this.urlFor(path, options.query);
    const headers: Record<string, string> = { Accept: options.accept ?? "application/json", "X-Runner-Client": "cli" };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET" && this.token) headers.Authorization = `Bearer ${this.token}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(options.timeoutMs ?? this.defaultTimeoutMs),
      });
    } catch (err) {
      throw new ApiUnreachableError(this.baseUrl, reasonOf(err));
    }
    const text = await response.text();
    if (!response.ok) throw new ApiResponseError(response.status, problemDetail(text, response.statusText), method, url);
    if (response.status === 204 || text === "") return undefined as T;
    if ((response.headers.get("content-type") ?? "").includes("json")) return JSON.parse(text) as T;
    return text as T;
  }
}

/** The readable part of an error answer: its detail, each field of a 422, or its title. */
export function problemDetail(text: string, fallback: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown; title?: unknown; errors?: unknown };
    if (typeof body.detail === "string") return body.detail;
    // a 422 carries FastAPI's detail list; our problem JSON also names each field in `errors`
    if (Array.isArray(body.errors)) {
      const fields = body.errors
        .map((e: unknown) => (e && typeof e === "object" && "field" in e && "message" in e ? `${String(e.field)}: ${String(e.message)}` : undefined))
        .filter((line): line is string => line !== undefined);
      if (fields.length > 0) return fields.join("; ");
    }
    if (Array.isArray(body.detail)) {
      const messages = body.detail
        .map((d: unknown) => (d && typeof d === "object" && "msg" in d ? `${"loc" in d && Array.isArray(d.loc) ? d.loc.join(".") + ": " : ""}${String(d.msg)}` : undefined))
        .filter((line): line is string => line !== undefined);
      if (messages.length > 0) return messages.join("; ");
    }
    if (typeof body.title === "string") return body.title;
  } catch {
    // not JSON: show the text itself
  }
  return text.trim().slice(0, 500) || fallback;
}
