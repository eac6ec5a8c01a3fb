// Errors under /ui: pages answer an HTML page naming the problem, page data and actions answer
// problem JSON (the API's shape, so the page script reads `detail` and `field` the same way).
// Engine errors map to statuses by class, exactly as in the API.
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "pino";
import { ApiProblem, problemForRunnerError, sendProblem, titleFor } from "../api/index.ts";
import { coerceError } from "../errors.ts";
import { html, webPaths } from "./html.ts";
import { renderPage } from "./layout.ts";

export class WebNotFound extends ApiProblem {
  constructor(path: string) {
    super(404, `no page at ${path}`);
  }
}

interface WebProblem {
  status: number;
  detail: string;
  field?: string;
}

/** body-parser and express errors carry a client status (bad JSON, too large). */
function clientStatusOf(err: unknown): number | undefined {
  if (!err || typeof err !== "object") return undefined;
  const status = (err as { status?: unknown }).status;
  return typeof status === "number" && status >= 400 && status < 500 ? status : undefined;
}

function describe(err: unknown): WebProblem | undefined {
  if (err instanceof ApiProblem) return { status: err.status, detail: err.detail, field: err.extra.field };
  const known = problemForRunnerError(err);
  if (known) return { status: known.status, detail: known.detail, field: known.field };
  const status = clientStatusOf(err);
  if (status !== undefined) return { status, detail: coerceError(err).message, field: "body" };
  return undefined;
}

export function renderErrorPage(problem: WebProblem): string {
  const body = html`<h1>${problem.status} ${titleFor(problem.status)}</h1>
<p class="notice error-text" id="error-detail">${problem.detail}</p>
<p><a href="${webPaths.dagList()}">Back to the DAGs</a></p>`;
  return renderPage({ title: titleFor(problem.status), pageKind: "error", nav: "dags", body });
}

/** The request's path from the root, whatever router it reached us through. */
function fullPathOf(originalUrl: string): string {
  return originalUrl.split("?")[0] ?? originalUrl;
}

function wantsJson(path: string): boolean {
  return path.startsWith("/ui/data/") || path.startsWith("/ui/actions/");
}

export function webNotFound(): RequestHandler {
  return (req, _res, next) => next(new WebNotFound(fullPathOf(req.originalUrl)));
}

export function webErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    let problem = describe(err);
    if (!problem) {
      const requestId = String(res.locals.requestId ?? "");
      logger.error({ err: coerceError(err), requestId, url: req.originalUrl }, "unexpected error in the web view");
      problem = { status: 500, detail: `internal error while serving ${fullPathOf(req.originalUrl)}; see the runner log${requestId ? ` for request ${requestId}` : ""}` };
    }
    if (wantsJson(fullPathOf(req.originalUrl))) {
      sendProblem(res, { type: "about:blank", title: titleFor(problem.status), ...problem });
      return;
    }
    res.status(problem.status).type("html").send(renderErrorPage(problem));
  };
}
