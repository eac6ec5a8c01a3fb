// One declaration per route: path, auth, zod schemas for path/query/body and responses, and the
// handler. The same declarations mount the express routes and write the OpenAPI document, so the
// two cannot drift apart.
import express, { type Request, type RequestHandler, type Response, type Router } from "express";
import { z } from "zod";
import { assertStorableJson } from "./body-checks.ts";
import { ApiProblem } from "./problem.ts";

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

export interface ResponseDoc {
  description: string;
  /** Named component in the OpenAPI document; omitted for bodiless or non-JSON answers. */
  schema?: z.ZodType;
  schemaName?: string;
  contentType?: string;
}

export interface HandlerInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

/** What documents a route (OpenAPI) and how it is mounted, whatever its input types. */
interface RouteDoc {
  method: HttpMethod;
  /** OpenAPI style: /api/v2/dags/{dag_id}. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Mutating routes need the bearer token. */
  auth: boolean;
  bodySchemaName?: string;
  /** The body may also come as application/x-www-form-urlencoded (Airflow's login form). */
  formBody?: boolean;
  /** false: a POST that only reads (a list with a body); not written to the event log. */
  audit?: false;
  responses: Record<number, ResponseDoc>;
}

export interface RouteDefinition<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> extends RouteDoc {
  params?: P;
  query?: Q;
  body?: B;
  handle: (input: HandlerInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<void> | void;
}

/** A route with its types erased, as collected for mounting and documentation. */
export interface RouteSpec extends RouteDoc {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  run: (req: Request, res: Response) => Promise<void>;
}

const noParams = z.object({}).strict();

export function defineRoute<
  P extends z.ZodType = typeof noParams,
  Q extends z.ZodType = typeof noParams,
  B extends z.ZodType = z.ZodUndefined,
>(def: RouteDefinition<P, Q, B>): RouteSpec {
  const { handle, ...doc } = def;
  return {
    ...doc,
    run: async (req, res) => {
      const params = parseInput(def.params ?? noParams, req.params, "path", 400) as z.output<P>;
      const query = parseInput(def.query ?? noParams, req.query, "query", 422) as z.output<Q>;
      const body = (def.body ? parseInput(def.body, req.body, "body", 422) : undefined) as z.output<B>;
      await handle({ params, query, body, req, res });
    },
  };
}

/** Express path syntax for an OpenAPI path: {dag_id} -> :dag_id. */
export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ":$1");
}

function describeIssue(issue: z.core.$ZodIssue, location: string): { field: string; message: string }[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      field: [...issue.path.map(String), key].join("."),
      message: location === "query" ? `unknown query parameter '${key}'` : `unknown field '${key}'`,
    }));
  }
  // a repeated query parameter's index means nothing to the caller: name the parameter
  const path = location === "query" ? issue.path.filter((p) => typeof p !== "number") : issue.path;
  const field = path.map(String).join(".") || location;
  return [{ field, message: issue.message }];
}

function parseInput(schema: z.ZodType, value: unknown, location: "path" | "query" | "body", status: number): unknown {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.flatMap((issue) => describeIssue(issue, location));
  const detail = errors.map((e) => `${location === "body" ? "" : `${location} parameter `}${e.field}: ${e.message}`).join("; ");
  throw new ApiProblem(status, detail, { field: errors[0]?.field ?? location, errors, location });
}

export interface MountOptions {
  requireToken: RequestHandler;
  bodyLimitBytes: number;
  /** After a change answered below 400 (any method but GET, unless the route says audit: false). */
  onChange?: (spec: RouteSpec, req: Request, res: Response) => Promise<void>;
}

/** Parses a JSON (or, with form, urlencoded) body; an empty body reads as {} so optional-only bodies may be omitted. */
function jsonBody(limitBytes: number, form = false): RequestHandler[] {
  const types = form ? ["application/json", "application/*+json", "application/x-www-form-urlencoded"] : ["application/json", "application/*+json"];
  const parseJson = express.json({ limit: limitBytes, strict: true, type: ["application/json", "application/*+json"] });
  const parseForm = express.urlencoded({ limit: limitBytes, extended: false, type: "application/x-www-form-urlencoded" });
  const parse: RequestHandler = (req, res, next) => {
    if (form && req.is("application/x-www-form-urlencoded")) parseForm(req, res, next);
    else parseJson(req, res, next);
  };
  const requireJson: RequestHandler = (req, _res, next) => {
    const hasContent = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (!hasContent) {
      req.body = {};
      next();
      return;
    }
    if (!req.is(types)) {
      next(new ApiProblem(415, `request body must be ${form ? "JSON or a form" : "JSON"} (Content-Type: ${types.join(" or ")}), got '${req.headers["content-type"] ?? "none"}'`, { field: "body" }));
      return;
    }
    next();
  };
  const storable: RequestHandler = (req, _res, next) => {
    assertStorableJson(req.body);
    next();
  };
  return [requireJson, parse, storable];
}

/** Mounts every spec on the router, then answers other methods on the same paths with 405. */
export function mountRoutes(router: Router, specs: RouteSpec[], options: MountOptions): void {
  const byPath = new Map<string, RouteSpec[]>();
  for (const spec of specs) byPath.set(spec.path, [...(byPath.get(spec.path) ?? []), spec]);
  for (const [path, group] of byPath) {
    const route = router.route(expressPath(path));
    for (const spec of group) {
      const chain: RequestHandler[] = [];
      if (spec.auth) chain.push(options.requireToken);
      if (spec.body) chain.push(...jsonBody(options.bodyLimitBytes, spec.formBody));
      const { onChange } = options;
      const audited = onChange !== undefined && spec.method !== "get" && spec.audit !== false;
      chain.push(async (req, res) => {
        await spec.run(req, res);
        if (audited && res.statusCode < 400) await onChange(spec, req, res);
      });
      route[spec.method](...chain);
    }
    const allowed = group.map((s) => s.method.toUpperCase());
    if (allowed.includes("GET")) allowed.push("HEAD");
    const allow = allowed.join(", ");
    route.all((req, res, next) => {
      res.setHeader("Allow", allow);
      if (req.method === "OPTIONS") {
        res.status(204).end();
        return;
      }
      next(new ApiProblem(405, `method ${req.method} is not allowed on ${path}; allowed: ${allow}`));
    });
  }
}
