// The run-history web view, served by the API process: server-rendered pages under /ui, each with
// a JSON twin under /ui/data that the page script polls while runs are active, page actions
// under /ui/actions, and the static files. Mounted beside the API by src/server/app.ts; reads go
// through RunnerService only, like the REST API, and the schema page through the source it is given.
import { readFileSync } from "node:fs";
import express from "express";
import type { Request, Response, Router } from "express";
import type { Logger } from "pino";
import { z } from "zod";
import { dagIdSchema, runIdSchema, taskIdSchema, variableKeySchema } from "../api/schemas.ts";
import { ApiProblem } from "../api/problem.ts";
import type { RunnerService } from "../runner/service.ts";
import { pageActionsRouter } from "./actions.ts";
import { webPaths } from "./html.ts";
import { buildGridView, renderGridPage } from "./pages/dag-grid.ts";
import { buildDagListView, renderDagListPage } from "./pages/dag-list.ts";
import { renderRunPage } from "./pages/run-page.ts";
import { buildRunView } from "./pages/run-view.ts";
import { buildSchemaStatusView, renderSchemaStatusPage, type SchemaStatusSource } from "./pages/schema-status.ts";
import { buildVariableHistoryView, buildVariablesView, renderVariableHistoryPage, renderVariablesPage } from "./pages/variables.ts";
import { webSecurityHeaders } from "./security.ts";
import { webErrorHandler, webNotFound } from "./web-errors.ts";

export interface WebRouterOptions {
  runner: RunnerService;
  logger: Logger;
  /** The world's schema status (the /ui/schema page); the page says it is not available without it. */
  schemaStatus?: SchemaStatusSource;
}

const offsetSchema = z.coerce.number().int().min(0).max(1_000_000_000).default(0);
const pageQuery = z.object({ offset: offsetSchema });
const runQuery = z.object({
  task: taskIdSchema.optional(),
  try: z.coerce.number().int().min(1).max(1_000_000).optional(),
  log_offset: offsetSchema,
});

/** Parses a path or query part; a bad one is 400 naming it (pages ignore unknown query keys). */
function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = [what, ...(issue?.path.map(String) ?? [])].filter(Boolean).join(".");
  throw new ApiProblem(400, `${field}: ${issue?.message ?? "invalid"}`, { field });
}

type ViewBuilder<V> = (req: Request) => Promise<V>;

/** One page: GET /ui<path> renders HTML, GET /ui/data<path> answers the same view as JSON. */
function servePage<V>(router: Router, path: string, build: ViewBuilder<V>, render: (view: V, req: Request) => string): void {
  router.get(`/ui${path}`, async (req: Request, res: Response) => {
    const view = await build(req);
    res.type("html").send(render(view, req));
  });
  router.get(`/ui/data${path}`, async (req: Request, res: Response) => {
    res.json(await build(req));
  });
}

const STATIC_FILES: Readonly<Record<string, string>> = {
  "web.js": "text/javascript; charset=utf-8",
  "page-actions.js": "text/javascript; charset=utf-8",
  "conf-check.js": "text/javascript; charset=utf-8",
  "web.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/** The files of ./static, read once; only the names listed above are served. */
function mountStaticFiles(router: Router): void {
  for (const [name, contentType] of Object.entries(STATIC_FILES)) {
    const body = readFileSync(new URL(`./static/${name}`, import.meta.url));
    router.get(`/ui/static/${name}`, (_req, res) => {
      res.setHeader("Cache-Control", "no-cache");
      res.type(contentType).send(body);
    });
  }
}

function mountPages(router: Router, runner: RunnerService, schemaStatus: SchemaStatusSource | undefined): void {
  servePage(router, "/", (req) => buildDagListView(runner, parse(pageQuery, req.query, "").offset), renderDagListPage);
  servePage(
    router,
    "/dags/:dagId",
    (req) => buildGridView(runner, parse(dagIdSchema, req.params.dagId, "dag_id"), parse(pageQuery, req.query, "").offset),
    renderGridPage,
  );
  servePage(
    router,
    "/dags/:dagId/runs/:runId",
    (req) => {
      const query = parse(runQuery, req.query, "");
      const dagId = parse(dagIdSchema, req.params.dagId, "dag_id");
      const runId = parse(runIdSchema, req.params.runId, "dag_run_id");
      return buildRunView(runner, dagId, runId, { taskId: query.task, tryNumber: query.try, logOffset: query.log_offset });
    },
    (view, req) => renderRunPage(view, req.originalUrl),
  );
  servePage(router, "/variables", (req) => buildVariablesView(runner, parse(pageQuery, req.query, "").offset), renderVariablesPage);
  servePage(
    router,
    "/variables/:key",
    (req) => buildVariableHistoryView(runner, parse(variableKeySchema, req.params.key, "variable_key"), parse(pageQuery, req.query, "").offset),
    renderVariableHistoryPage,
  );
  servePage(router, "/schema", () => buildSchemaStatusView(schemaStatus), renderSchemaStatusPage);
}

export function createWebRouter(options: WebRouterOptions): Router {
  const router = express.Router();
  router.get("/", (_req, res) => res.redirect(302, webPaths.dagList()));
  router.use("/ui", webSecurityHeaders());
  mountStaticFiles(router);
  mountPages(router, options.runner, options.schemaStatus);
  router.use(pageActionsRouter(options.runner));
  router.use("/ui", webNotFound());
  router.use("/ui", webErrorHandler(options.logger));
  return router;
}
