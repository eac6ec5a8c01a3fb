// Problem JSON (RFC 9457, Airflow's {detail} plus type/title/status) for every error the API
// answers, and the one error handler that maps engine errors to statuses by class.
import type { ErrorRequestHandler, Response } from "express";
import type { Logger } from "pino";
import {
  ConfValidationError,
  ConnectionExistsError,
  ConnectionNotFoundError,
  ConnectionTestActiveError,
  ConnectionTestNotFoundError,
  DagAlreadyFavoriteError,
  DagNotFavoriteError,
  DagNotFoundError,
  DagRunNotFoundError,
  DagStaleError,
  DagVersionNotFoundError,
  DuplicateRunError,
  EventLogNotFoundError,
  BackfillConflictError,
  BackfillNotFoundError,
  TaskInstanceNotFoundError,
  ReadOnlyError,
  RunNotDeletableError,
  XComExistsError,
  XComNotFoundError,
  XComTooLargeError,
  RunNotRebindableError,
  TryNotFoundError,
  UnknownTaskIdsError,
  VariableNotFoundError,
} from "../runner/index.ts";
import { errorCode, coerceError } from "../errors.ts";

/** One item of FastAPI's validation detail (Airflow's HTTPValidationError). */
export interface ValidationDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  /** A sentence; on 422, FastAPI's list of {loc, msg, type} as Airflow answers (the same text is in `errors`). */
  detail: string | ValidationDetail[];
  /** The request field the problem is about, e.g. "conf.days", "limit", "dag_id". */
  field?: string;
  errors?: { field: string; message: string }[];
  request_id?: string;
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
};

export function titleFor(status: number): string {
  return TITLES[status] ?? (status >= 500 ? "Server Error" : "Client Error");
}

/** An error the API answers as-is: thrown by handlers and validation, never logged as a fault. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: { field?: string; errors?: { field: string; message: string }[]; location?: "body" | "query" | "path" | "header" } = {},
  ) {
    super(detail);
    this.name = "ApiProblem";
  }
}

export function sendProblem(res: Response, problem: ProblemBody): void {
  res.status(problem.status).type("application/problem+json").send(JSON.stringify(problem));
}

type ProblemExtra = Omit<Partial<ProblemBody>, "detail" | "status" | "title" | "type">;

function problemOf(status: number, detail: string, extra: ProblemExtra = {}): ProblemBody & { detail: string } {
  return { type: "about:blank", title: titleFor(status), status, ...extra, detail };
}

/** A 422 in Airflow's (FastAPI's) shape: detail is a list of {loc, msg, type}; `errors` keeps
 * {field, message} and `field` the first field, as every other problem of this API. */
function validationProblem(problem: ApiProblem): ProblemBody {
  const location = problem.extra.location ?? "body";
  const errors = problem.extra.errors ?? [{ field: problem.extra.field ?? location, message: problem.detail }];
  const detail = errors.map((e) => ({
    loc: [location, ...(e.field === location || e.field === "body" ? [] : e.field.split("."))],
    msg: e.message,
    type: "value_error",
  }));
  return { ...problemOf(422, problem.detail, { field: problem.extra.field, errors }), detail };
}

/** Maps an engine error to a problem by its class; undefined for errors that are not the caller's. */
export function problemForRunnerError(err: unknown): (ProblemBody & { detail: string }) | undefined {
  if (err instanceof DagNotFoundError) return problemOf(404, err.message, { field: "dag_id" });
  if (err instanceof DagVersionNotFoundError) return problemOf(404, err.message, { field: "version_number" });
  if (err instanceof DagRunNotFoundError) return problemOf(404, err.message, { field: "dag_run_id" });
  if (err instanceof TaskInstanceNotFoundError) return problemOf(404, err.message, { field: "task_id" });
  if (err instanceof TryNotFoundError) return problemOf(404, err.message, { field: "try_number" });
  if (err instanceof VariableNotFoundError) return problemOf(404, err.message, { field: "variable_key" });
  if (err instanceof DuplicateRunError) return problemOf(409, err.message, { field: "dag_run_id" });
  if (err instanceof DagStaleError) return problemOf(409, err.message, { field: "dag_id" });
  if (err instanceof DagAlreadyFavoriteError || err instanceof DagNotFavoriteError) return problemOf(409, err.message, { field: "dag_id" });
  if (err instanceof EventLogNotFoundError) return problemOf(404, err.message, { field: "event_log_id" });
  if (err instanceof BackfillNotFoundError) return problemOf(404, err.message, { field: "backfill_id" });
  if (err instanceof BackfillConflictError) return problemOf(409, err.message, { field: err.field });
  if (err instanceof ConnectionNotFoundError) return problemOf(404, err.message, { field: "connection_id" });
  if (err instanceof ConnectionExistsError) return problemOf(409, err.message, { field: "connection_id" });
  if (err instanceof ConnectionTestActiveError) return problemOf(409, err.message, { field: "connection_id" });
  if (err instanceof ConnectionTestNotFoundError) return problemOf(404, err.message, { field: "Airflow-Connection-Test-Token" });
  if (err instanceof XComNotFoundError) return problemOf(404, err.message, { field: "xcom_key" });
  if (err instanceof XComTooLargeError) return problemOf(413, err.message, { field: "value" });
  if (err instanceof XComExistsError) return problemOf(409, err.message, { field: "key" });
  if (err instanceof RunNotDeletableError) return problemOf(409, err.message, { field: "dag_run_id" });
  if (err instanceof ReadOnlyError) return problemOf(409, err.message, { field: err.field });
  if (err instanceof RunNotRebindableError) return problemOf(409, err.message, { field: "run_on_latest_version" });
  if (err instanceof UnknownTaskIdsError) return problemOf(400, err.message, { field: "task_ids" });
  // Airflow answers invalid params with 400; the field is the path inside the body.
  if (err instanceof ConfValidationError) {
    const field = err.field.startsWith("conf") ? err.field : `conf.${err.field}`;
    return problemOf(400, err.message, { field, errors: [{ field, message: err.problem }] });
  }
  return undefined;
}

interface ClientHttpError {
  status: number;
  message: string;
  type?: string;
  /** The router could not percent-decode a path segment. */
  uriError: boolean;
}

/** Errors raised by express itself or body-parser (bad JSON, too large, undecodable path) carry
 * an HTTP status and are safe to show; anything else is an internal fault. */
function clientHttpError(err: unknown): ClientHttpError | undefined {
  if (!err || typeof err !== "object") return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; message?: unknown; type?: unknown };
  const status = typeof e.status === "number" ? e.status : typeof e.statusCode === "number" ? e.statusCode : undefined;
  if (status === undefined || status < 400 || status > 499) return undefined;
  return {
    status,
    message: typeof e.message === "string" ? e.message : titleFor(status),
    type: typeof e.type === "string" ? e.type : undefined,
    uriError: err instanceof URIError,
  };
}

function describeClientError(http: ClientHttpError, limitBytes: number): ProblemBody {
  switch (http.type) {
    case "entity.parse.failed":
      return problemOf(400, `request body is not valid JSON: ${http.message}`, { field: "body" });
    case "entity.too.large":
      return problemOf(413, `request body is larger than the limit of ${limitBytes} bytes`, { field: "body" });
    case "encoding.unsupported":
    case "charset.unsupported":
      return problemOf(415, http.message, { field: "body" });
    default:
      if (http.uriError) return problemOf(400, `the path is not valid percent-encoding: ${http.message}`, { field: "path" });
      return problemOf(http.status, http.message);
  }
}

// Connection-level failures: the database is down or restarting, not a bug in the request.
const UNAVAILABLE_NET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH"]);

function isDatabaseUnavailable(err: unknown): boolean {
  const code = errorCode(err);
  if (code === undefined) return false;
  // SQLSTATE class 08 (connection exception), 57P01..57P03 (admin shutdown, crash, cannot connect now)
  return UNAVAILABLE_NET_CODES.has(code) || code.startsWith("08") || /^57P0[1-3]$/.test(code);
}

export function errorHandler(logger: Logger, bodyLimitBytes: number): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const requestId = String(res.locals.requestId ?? "");
    if (err instanceof ApiProblem) {
      const { location: _location, ...extra } = err.extra;
      sendProblem(res, err.status === 422 ? validationProblem(err) : problemOf(err.status, err.detail, extra));
      return;
    }
    const known = problemForRunnerError(err);
    if (known) {
      sendProblem(res, known);
      return;
    }
    const http = clientHttpError(err);
    if (http) {
      sendProblem(res, describeClientError(http, bodyLimitBytes));
      return;
    }
    const error = coerceError(err);
    if (isDatabaseUnavailable(err)) {
      logger.warn({ err: error, requestId }, "runner database unavailable");
      sendProblem(res, problemOf(503, "the runner's Postgres database is unavailable; check /api/v2/monitor/health and the stand", { request_id: requestId }));
      return;
    }
    logger.error({ err: error, requestId, method: req.method, url: req.originalUrl }, "unexpected error in API handler");
    sendProblem(
      res,
      problemOf(500, `internal error while handling ${req.method} ${req.path}; see the runner log for request ${requestId}`, {
        request_id: requestId,
      }),
    );
  };
}
