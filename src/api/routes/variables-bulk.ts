// PATCH /api/v2/variables: Airflow's bulk route. Actions (create, update, delete) apply in order;
// each answers the keys it changed and its errors. As in Airflow, an action whose
// action_on_existence / action_on_non_existence is "fail" and that meets such a key changes nothing
// and reports one error (409 for existing keys, 404 for missing ones).
import { type RunnerService, VariableNotFoundError } from "../../runner/index.ts";
import { type ApiContext, callerOf } from "../context.ts";
import { runBulkActions } from "../bulk.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { bulkResponse, bulkVariablesBody, type BulkVariablesBody } from "../schemas.ts";

type BulkAction = BulkVariablesBody["actions"][number];
type ActionResult = { success: string[]; errors: { error: string; status_code: number }[] };

/** Airflow 3 accepts any JSON value and stores non-strings as their JSON text. */
export function storedText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

async function existingKeys(runner: RunnerService, keys: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const key of new Set(keys)) {
    try {
      await runner.getVariable(key);
      found.add(key);
    } catch (err) {
      if (!(err instanceof VariableNotFoundError)) throw err;
    }
  }
  return found;
}

const keyList = (keys: Iterable<string>) => [...keys].map((k) => `'${k}'`).join(", ");

async function applyAction(runner: RunnerService, action: BulkAction, changedBy: string): Promise<ActionResult> {
  const keys = action.entities.map((e) => (typeof e === "string" ? e : e.key));
  const existing = await existingKeys(runner, keys);
  const result: ActionResult = { success: [], errors: [] };
  if (action.action === "create") {
    const clash = keys.filter((k) => existing.has(k));
    if (clash.length > 0 && action.action_on_existence === "fail") {
      return { ...result, errors: [{ error: `The variables with these keys: ${keyList(clash)} already exist.`, status_code: 409 }] };
    }
    for (const entity of action.entities) {
      if (existing.has(entity.key) && action.action_on_existence === "skip") continue;
      await runner.setVariable(entity.key, storedText(entity.value), { changedBy, description: entity.description ?? null });
      result.success.push(entity.key);
    }
    return result;
  }
  const missing = keys.filter((k) => !existing.has(k));
  if (missing.length > 0 && action.action_on_non_existence === "fail") {
    return { ...result, errors: [{ error: `The variables with these keys: ${keyList(missing)} were not found.`, status_code: 404 }] };
  }
  if (action.action === "update") {
    const mask = action.update_mask ? new Set(action.update_mask) : undefined;
    for (const entity of action.entities) {
      if (!existing.has(entity.key)) continue;
      const current = await runner.getVariable(entity.key);
      await runner.setVariable(entity.key, !mask || mask.has("value") ? storedText(entity.value) : current.value, {
        changedBy,
        description: !mask || mask.has("description") ? (entity.description ?? current.description) : current.description,
      });
      result.success.push(entity.key);
    }
    return result;
  }
  for (const key of keys) {
    if (!existing.has(key)) continue;
    await runner.deleteVariable(key, { changedBy });
    result.success.push(key);
  }
  return result;
}

export function variableBulkRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "patch",
      path: "/api/v2/variables",
      operationId: "bulk_variables",
      summary: "Create, update and delete variables in one call",
      description:
        "Airflow's BulkBody[VariableBody]. Actions apply in order; every change is recorded in the history. An action that " +
        "fails on an existing (create) or missing (update, delete) key changes nothing and reports the keys.",
      tag: "Variable",
      auth: true,
      body: bulkVariablesBody,
      bodySchemaName: "BulkBody_VariableBody_",
      responses: { 200: { description: "Per action: the keys changed and the errors", schema: bulkResponse, schemaName: "BulkResponse" } },
      async handle({ body, req, res }) {
        res.json(await runBulkActions(body.actions, (action) => applyAction(runner, action, `api:${callerOf(req)}`)));
      },
    }),
  ];
}
