// Variables: Airflow's CRUD routes plus /history (every change: who, when, which run).
import { type ApiContext, callerOf } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { sortKeys, VARIABLE_SORT_FIELDS, VariableNotFoundError } from "../../runner/index.ts";
import {
  variablesQuery,
  variableBody,
  variableCollection,
  variableHistoryResponse,
  variablePatchBody,
  variablePatchQuery,
  variablePathParams,
  variableResponse,
} from "../schemas.ts";
import { serializeVariable, serializeVariableChange } from "../serialize.ts";
import { storedText } from "./variables-bulk.ts";

const variableSchema = { schema: variableResponse, schemaName: "VariableResponse" };


function updateMask(mask: string | string[] | undefined): Set<string> | undefined {
  if (mask === undefined) return undefined;
  const fields = (Array.isArray(mask) ? mask : [mask]).flatMap((m) => m.split(",")).map((f) => f.trim()).filter(Boolean);
  const unknown = fields.filter((f) => f !== "value" && f !== "description");
  if (unknown.length > 0) {
    throw new ApiProblem(422, `update_mask may name only 'value' and 'description', not ${unknown.map((f) => `'${f}'`).join(", ")}`, {
      field: "update_mask",
    });
  }
  return new Set(fields);
}

export function variableRoutes({ runner }: ApiContext): RouteSpec[] {
  async function exists(key: string): Promise<boolean> {
    try {
      await runner.getVariable(key);
      return true;
    } catch (err) {
      if (err instanceof VariableNotFoundError) return false;
      throw err;
    }
  }

  return [
    defineRoute({
      method: "get",
      path: "/api/v2/variables",
      operationId: "get_variables",
      summary: "List variables",
      tag: "Variable",
      auth: false,
      description: "Airflow's parameters: order_by (several keys, - for descending; id is the key here, _val the value), " +
        "variable_key_pattern (ILIKE substring, | for or) and variable_key_prefix_pattern (a literal prefix). Without order_by, by key.",
      query: variablesQuery,
      responses: { 200: { description: "One page of variables", schema: variableCollection, schemaName: "VariableCollectionResponse" }, 422: { description: "An unknown parameter or order_by key" } },
      async handle({ query, res }) {
        const page = await runner.listVariables({
          limit: query.limit,
          offset: query.offset,
          orderBy: sortKeys(query.order_by ?? [], VARIABLE_SORT_FIELDS),
          pattern: query.variable_key_pattern,
          prefix: query.variable_key_prefix_pattern,
        });
        res.json({ variables: page.items.map(serializeVariable), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/variables",
      operationId: "post_variable",
      summary: "Create a variable",
      tag: "Variable",
      auth: true,
      body: variableBody,
      bodySchemaName: "VariableBody",
      responses: { 201: { description: "Created", ...variableSchema }, 409: { description: "The key exists; use PATCH" } },
      async handle({ body, req, res }) {
        if (await exists(body.key)) {
          throw new ApiProblem(409, `variable '${body.key}' already exists; change it with PATCH /api/v2/variables/${body.key}`, {
            field: "key",
          });
        }
        const variable = await runner.setVariable(body.key, storedText(body.value), {
          changedBy: `api:${callerOf(req)}`,
          description: body.description ?? null,
        });
        res.status(201).json(serializeVariable(variable));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/variables/{variable_key}",
      operationId: "get_variable",
      summary: "Get a variable",
      tag: "Variable",
      auth: false,
      params: variablePathParams,
      responses: { 200: { description: "The variable", ...variableSchema }, 404: { description: "Unknown key" } },
      async handle({ params, res }) {
        res.json(serializeVariable(await runner.getVariable(params.variable_key)));
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/variables/{variable_key}",
      operationId: "patch_variable",
      summary: "Change a variable's value or description",
      description: "Fields absent from the body (or left out of update_mask) keep their values.",
      tag: "Variable",
      auth: true,
      params: variablePathParams,
      query: variablePatchQuery,
      body: variablePatchBody,
      bodySchemaName: "VariablePatchBody",
      responses: {
        200: { description: "The variable after the change", ...variableSchema },
        400: { description: "The key in the body differs from the path" },
        404: { description: "Unknown key" },
      },
      async handle({ params, query, body, req, res }) {
        const key = params.variable_key;
        if (body.key !== undefined && body.key !== key) {
          throw new ApiProblem(400, `body key '${body.key}' does not match the path key '${key}'`, { field: "key" });
        }
        const mask = updateMask(query.update_mask);
        const wants = (field: "value" | "description") => body[field] !== undefined && (!mask || mask.has(field));
        if (!wants("value") && !wants("description")) {
          throw new ApiProblem(422, "nothing to change: give value and/or description (and name them in update_mask, if any)", {
            field: "body",
          });
        }
        const current = await runner.getVariable(key);
        const variable = await runner.setVariable(key, wants("value") ? storedText(body.value) : current.value, {
          changedBy: `api:${callerOf(req)}`,
          description: wants("description") ? (body.description ?? null) : current.description,
        });
        res.json(serializeVariable(variable));
      },
    }),
    defineRoute({
      method: "delete",
      path: "/api/v2/variables/{variable_key}",
      operationId: "delete_variable",
      summary: "Delete a variable",
      tag: "Variable",
      auth: true,
      params: variablePathParams,
      responses: { 204: { description: "Deleted" }, 404: { description: "Unknown key" } },
      async handle({ params, req, res }) {
        await runner.getVariable(params.variable_key);
        await runner.deleteVariable(params.variable_key, { changedBy: `api:${callerOf(req)}` });
        res.status(204).end();
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/variables/{variable_key}/history",
      operationId: "get_variable_history",
      summary: "Every change of a variable (extension)",
      description: "Oldest first; kept after the variable is deleted. 404 only when the key never existed.",
      tag: "Variable",
      auth: false,
      params: variablePathParams,
      responses: {
        200: { description: "The changes", schema: variableHistoryResponse, schemaName: "VariableHistoryResponse" },
        404: { description: "The key never existed" },
      },
      async handle({ params, res }) {
        const changes = await runner.variableHistory(params.variable_key);
        if (changes.length === 0 && !(await exists(params.variable_key))) {
          throw new VariableNotFoundError(params.variable_key);
        }
        const oldestFirst = [...changes].sort((a, b) => a.changedAt.getTime() - b.changedAt.getTime());
        res.json({ changes: oldestFirst.map(serializeVariableChange), total_entries: changes.length });
      },
    }),
  ];
}
