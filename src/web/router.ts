// The run-history web view, served by the API process: server-rendered pages under /ui, each with
// a JSON twin under /ui/data that the page script polls while runs are active, page actions
// under /ui/actions, and the static files. Mounted beside the API by src/server/app.ts; reads go
// through RunnerService only, like the REST API, and the schema page through the source it is given.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync, type BuildFailure, type BuildResult, type Message } from "esbuild";
import express, { type Request, type Response, type Router } from "express";
import type { Logger } from "pino";
import { z } from "zod";
import { dagIdSchema, runIdSchema, taskIdSchema, variableKeySchema, ApiProblem } from "../api/index.ts";
import type { RunnerService } from "../runner/index.ts";
import { pageActionsRouter } from "./actions.ts";
import { webPaths } from "./html.ts";
import { buildDagCodeView, renderDagCodePage } from "./pages/dag-code.ts";
import { buildGridView, renderGridPage } from "./pages/dag-grid.ts";
import { buildDagListView, renderDagListPage } from "./pages/dag-list.ts";
import { buildImportErrorsView, renderImportErrorsPage } from "./pages/import-errors.ts";
import { renderRunPage } from "./pages/run-page.ts";
import { buildRunView } from "./pages/run-view.ts";
import { buildSchemaStatusView, renderSchemaStatusPage, type SchemaStatusSource } from "./pages/schema-status.ts";
import { renderWorldPage } from "./pages/world-page.ts";
import { buildWorldView, worldQuery, type WorldSources } from "./pages/world-view.ts";
import { buildVariableHistoryView, buildVariablesView, renderVariableHistoryPage, renderVariablesPage } from "./pages/variables.ts";
import { webSecurityHeaders } from "./security.ts";
import { webErrorHandler, webNotFound } from "./web-errors.ts";

export interface WebRouterOptions {
  runner: RunnerService;
  logger: Logger;
  /** The world's schema status (the /ui/schema page); the page says it is not available without it. */
  schemaStatus?: SchemaStatusSource;
  /** The world's ClickHouse and Kafka (the /ui/world page); its parts say "not wired in" without it. */
  world?: WorldSources;
}

const offsetSchema = z.coerce.number().int().min(0).max(1_000_000_000).default(0);
const pageQuery = z.object({ offset: offsetSchema });
const codeQuery = z.object({ offset: offsetSchema, version: z.coerce.number().int().min(1).max(1_000_000_000).optional() });
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

/** Served from ./static as they are. */
const STATIC_FILES: Readonly<Record<string, string>> = {
  "web.css": "text/css; charset=utf-8",
  "favicon.svg": "image/svg+xml",
};

/** Served as /ui/static/<name>.js, each bundled from ./browser/<name>.ts with what it imports. */
const BROWSER_SCRIPTS = ["web", "page-actions", "conf-check"] as const;
const SCRIPT_TYPE = "text/javascript; charset=utf-8";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BROWSER_DIR = "src/web/browser";

function describeBundleMessage(message: Message): string {
  const where = message.location ? `${message.location.file}:${message.location.line}:${message.location.column}: ` : "";
  return `${where}${message.text}`;
}

/**
 * The page scripts, bundled in memory by esbuild (ES modules, es2020, not minified so the served code
 * stays readable). Synchronous, once per process, when this module loads: a runner whose browser
 * code does not bundle fails at start, before the engine starts, naming the file and line.
 */
function bundleBrowserScripts(): ReadonlyMap<string, Buffer> {
  const entryPoints = Object.fromEntries(BROWSER_SCRIPTS.map((name) => [name, `${BROWSER_DIR}/${name}.ts`]));
  let result: BuildResult<{ write: false }>;
  try {
    result = buildSync({
      absWorkingDir: REPO_ROOT,
      entryPoints,
      tsconfig: `${BROWSER_DIR}/tsconfig.json`,
      bundle: true,
      write: false,
      outdir: "/ui/static",
      format: "esm",
      platform: "browser",
      target: "es2020",
      minify: false,
      charset: "utf8",
      logLevel: "silent",
      banner: { js: `// Bundled by esbuild from ${BROWSER_DIR}/*.ts when the runner starts (src/web/router.ts): edit the TypeScript there.` },
    });
  } catch (err) {
    const messages = (err as Partial<BuildFailure>).errors ?? [];
    const detail = messages.length > 0 ? messages.map(describeBundleMessage).join("\n  ") : String(err);
    throw new Error(`web view: bundling the page scripts from ${BROWSER_DIR} failed:\n  ${detail}`, { cause: err });
  }
  if (result.warnings.length > 0) {
    throw new Error(`web view: the page scripts in ${BROWSER_DIR} bundle with warnings:\n  ${result.warnings.map(describeBundleMessage).join("\n  ")}`);
  }
  return new Map(result.outputFiles.map((file) => [basename(file.path), Buffer.from(file.contents)]));
}

/** Every file under /ui/static: name, content type and body. */
function loadStaticFiles(): { name: string; contentType: string; body: Buffer }[] {
  const scripts = bundleBrowserScripts();
  return [
    ...BROWSER_SCRIPTS.map((script) => {
      const name = `${script}.js`;
      const body = scripts.get(name);
      if (body === undefined) throw new Error(`web view: esbuild produced no ${name} (from ${BROWSER_DIR}/${script}.ts)`);
      return { name, contentType: SCRIPT_TYPE, body };
    }),
    ...Object.entries(STATIC_FILES).map(([name, contentType]) => ({
      name,
      contentType,
      body: readFileSync(new URL(`./static/${name}`, import.meta.url)),
    })),
  ];
}

const staticFiles = loadStaticFiles();

/** Only the files above are served, from memory. */
function mountStaticFiles(router: Router): void {
  for (const { name, contentType, body } of staticFiles) {
    router.get(`/ui/static/${name}`, (_req, res) => {
      res.setHeader("Cache-Control", "no-cache");
      res.type(contentType).send(body);
    });
  }
}

function mountPages(router: Router, runner: RunnerService, schemaStatus: SchemaStatusSource | undefined, world: WorldSources | undefined): void {
  servePage(router, "/", (req) => buildDagListView(runner, parse(pageQuery, req.query, "").offset), renderDagListPage);
  servePage(
    router,
    "/dags/:dagId",
    (req) => buildGridView(runner, parse(dagIdSchema, req.params.dagId, "dag_id"), parse(pageQuery, req.query, "").offset),
    renderGridPage,
  );
  servePage(
    router,
    "/dags/:dagId/code",
    (req) => {
      const query = parse(codeQuery, req.query, "");
      return buildDagCodeView(runner, parse(dagIdSchema, req.params.dagId, "dag_id"), query.version, query.offset);
    },
    renderDagCodePage,
  );
  servePage(router, "/import-errors", () => buildImportErrorsView(runner), renderImportErrorsPage);
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
  servePage(router, "/world", (req) => buildWorldView(runner, world, parse(worldQuery, req.query, "").days), renderWorldPage);
}

export function createWebRouter(options: WebRouterOptions): Router {
  const router = express.Router();
  router.get("/", (_req, res) => res.redirect(302, webPaths.dagList()));
  router.use("/ui", webSecurityHeaders());
  mountStaticFiles(router);
  mountPages(router, options.runner, options.schemaStatus, options.world);
  router.use(pageActionsRouter(options.runner));
  router.use("/ui", webNotFound());
  router.use("/ui", webErrorHandler(options.logger));
  return router;
}
