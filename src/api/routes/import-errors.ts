// GET /api/v2/importErrors and .../{import_error_id}: the DAG files that do not load now, as the DAG
// processor recorded them in Postgres (one row per file; its id stays while the file stays broken).
import type { z } from "zod";
import type { ImportErrorRecord } from "../../runner/index.ts";
import { patternMatcher } from "../airflow-pattern.ts";
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { importErrorCollection, importErrorPathParams, importErrorResponse, importErrorsQuery, pageOf } from "../schemas.ts";
import { serializeImportError } from "../serialize.ts";

type ImportErrorsQuery = z.output<typeof importErrorsQuery>;

function selectImportErrors(all: readonly ImportErrorRecord[], query: ImportErrorsQuery): ImportErrorRecord[] {
  const matches = patternMatcher(query.filename_pattern);
  const selected = all.filter(
    (e) =>
      (query.filename === undefined || e.filename === query.filename) &&
      (query.filename_prefix_pattern === undefined || e.filename.startsWith(query.filename_prefix_pattern)) &&
      (query.bundle_name === undefined || e.bundleName === query.bundle_name) &&
      matches(e.filename),
  );
  const order = query.order_by?.[0] ?? "id";
  const key = order.replace(/^-/, "");
  selected.sort((a, b) =>
    key === "timestamp" ? a.timestamp.getTime() - b.timestamp.getTime() : key === "filename" ? a.filename.localeCompare(b.filename) : a.id - b.id,
  );
  if (order.startsWith("-")) selected.reverse();
  return selected;
}

export function importErrorRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/importErrors",
      operationId: "get_import_errors",
      summary: "DAG files that do not load",
      description:
        "A DAG file whose import throws (or whose DAGs the set refuses) is listed here; its DAGs keep their last good " +
        "version meanwhile (has_import_errors is true on them), and the row goes when the file loads again.",
      tag: "Import Error",
      auth: false,
      query: importErrorsQuery,
      responses: { 200: { description: "One page of import errors", schema: importErrorCollection, schemaName: "ImportErrorCollectionResponse" } },
      async handle({ query, res }) {
        const selected = selectImportErrors(await runner.listImportErrors(), query);
        res.json({ import_errors: pageOf(selected, query).map(serializeImportError), total_entries: selected.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/importErrors/{import_error_id}",
      operationId: "get_import_error",
      summary: "Get one import error",
      tag: "Import Error",
      auth: false,
      params: importErrorPathParams,
      responses: {
        200: { description: "The import error", schema: importErrorResponse, schemaName: "ImportErrorResponse" },
        404: { description: "No import error with this id (its file loads again, or never failed)" },
      },
      async handle({ params, res }) {
        const found = (await runner.listImportErrors()).find((e) => e.id === params.import_error_id);
        if (!found) throw new ApiProblem(404, `no import error ${params.import_error_id}: its file loads now, or it never existed`, { field: "import_error_id" });
        res.json(serializeImportError(found));
      },
    }),
  ];
}
