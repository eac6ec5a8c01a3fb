// PATCH /api/v2/connections: Airflow's bulk route. Actions (create, update, delete) apply in order;
// each answers the ids it changed and its errors. As in Airflow, an action whose
// action_on_existence / action_on_non_existence is "fail" and that meets such an id changes nothing
// and reports one error (409 for existing ids, 404 for missing ones); so does an action that would
// change one of the stand's own (read-only) connections (409).
import { z } from "zod";
import { ConnectionExistsError, ConnectionNotFoundError, type ConnectionRecord, type RunnerService } from "../../runner/index.ts";
import type { ApiContext } from "../context.ts";
import { runBulkActions } from "../bulk.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { bulkResponse } from "../schemas.ts";
import { applyBody, connectionBody, connectionIdSchema, fieldsOfBody, replaceWithBody } from "./connection-bodies.ts";

const UPDATE_MASK_FIELDS = ["connection_id", "conn_type", "description", "host", "login", "schema", "port", "password", "extra", "team_name"] as const;

const bulkCreateAction = z
  .object({
    action: z.literal("create"),
    entities: z.array(connectionBody).max(1000),
    action_on_existence: z.enum(["fail", "skip", "overwrite"]).default("fail"),
  })
  .strict();
const bulkUpdateAction = z
  .object({
    action: z.literal("update"),
    entities: z.array(connectionBody).max(1000),
    update_mask: z.array(z.enum(UPDATE_MASK_FIELDS)).max(50).nullable().optional(),
    action_on_non_existence: z.enum(["fail", "skip"]).default("fail"),
  })
  .strict();
const bulkDeleteAction = z
  .object({
    action: z.literal("delete"),
    entities: z.array(z.union([connectionIdSchema, connectionBody])).max(1000),
    action_on_non_existence: z.enum(["fail", "skip"]).default("fail"),
  })
  .strict();

/** Airflow's BulkBody[ConnectionBody]. */
const bulkConnectionsBody = z
  .object({ actions: z.array(z.discriminatedUnion("action", [bulkCreateAction, bulkUpdateAction, bulkDeleteAction])).max(100) })
  .strict();
type BulkAction = z.output<typeof bulkConnectionsBody>["actions"][number];
type ActionResult = { success: string[]; errors: { error: string; status_code: number }[] };

const idList = (ids: Iterable<string>) => [...new Set(ids)].map((id) => `'${id}'`).join(", ");

/** The stored connections among these ids, by id. */
async function storedOnes(runner: RunnerService, ids: readonly string[]): Promise<Map<string, ConnectionRecord>> {
  const found = new Map<string, ConnectionRecord>();
  for (const id of new Set(ids)) {
    try {
      found.set(id, await runner.getConnection(id));
    } catch (err) {
      if (!(err instanceof ConnectionNotFoundError)) throw err;
    }
  }
  return found;
}

/** One entity's change; a race with another caller (the id made or removed meanwhile) is that entity's error. */
async function attempt(result: ActionResult, id: string, change: () => Promise<unknown>): Promise<void> {
  try {
    await change();
    result.success.push(id);
  } catch (err) {
    if (err instanceof ConnectionExistsError) result.errors.push({ error: err.message, status_code: 409 });
    else if (err instanceof ConnectionNotFoundError) result.errors.push({ error: err.message, status_code: 404 });
    else throw err;
  }
}

async function applyAction(context: ApiContext, action: BulkAction): Promise<ActionResult> {
  const { runner } = context;
  const ids = action.entities.map((e) => (typeof e === "string" ? e : e.connection_id));
  const standIds = new Set(context.connections.readOnly().map((c) => c.connectionId));
  const stored = await storedOnes(runner, ids.filter((id) => !standIds.has(id)));
  const exists = (id: string) => standIds.has(id) || stored.has(id);
  const result: ActionResult = { success: [], errors: [] };
  const refuse = (error: string, status_code: number): ActionResult => ({ ...result, errors: [{ error, status_code }] });

  if (action.action === "create") {
    const clash = ids.filter(exists);
    if (clash.length > 0 && action.action_on_existence === "fail") return refuse(`The connections with these connection_ids: ${idList(clash)} already exist.`, 409);
    const standClash = clash.filter((id) => standIds.has(id));
    if (standClash.length > 0 && action.action_on_existence === "overwrite") {
      return refuse(`The connections with these connection_ids: ${idList(standClash)} are the stand's own services: read-only.`, 409);
    }
    for (const entity of action.entities) {
      const current = stored.get(entity.connection_id);
      if (exists(entity.connection_id) && action.action_on_existence === "skip") continue;
      await attempt(result, entity.connection_id, () =>
        current ? runner.updateConnection(replaceWithBody(current, entity)) : runner.createConnection(fieldsOfBody(entity)),
      );
    }
    return result;
  }
  const missing = ids.filter((id) => !exists(id));
  if (missing.length > 0 && action.action_on_non_existence === "fail") return refuse(`The connections with these connection_ids: ${idList(missing)} were not found.`, 404);
  const standHit = ids.filter((id) => standIds.has(id));
  if (standHit.length > 0) return refuse(`The connections with these connection_ids: ${idList(standHit)} are the stand's own services: read-only.`, 409);
  if (action.action === "update") {
    const mask = action.update_mask ?? undefined;
    for (const entity of action.entities) {
      const current = stored.get(entity.connection_id);
      if (!current) continue;
      await attempt(result, entity.connection_id, () => runner.updateConnection(applyBody(current, entity, mask)));
    }
    return result;
  }
  for (const id of new Set(ids)) {
    if (!stored.has(id)) continue;
    await attempt(result, id, () => runner.deleteConnection(id));
  }
  return result;
}

export function connectionBulkRoutes(context: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "patch",
      path: "/api/v2/connections",
      operationId: "bulk_connections",
      summary: "Create, update and delete connections in one call",
      description:
        "Airflow's BulkBody[ConnectionBody]. Actions apply in order. An action that fails on an existing (create) or " +
        "missing (update, delete) id, or that would change one of the stand's own connections, changes nothing and " +
        "reports the ids. create with overwrite replaces every field (what the entity leaves out becomes null); update " +
        "changes the fields given (and named in update_mask); a password or extra value of \"***\" keeps the stored one.",
      tag: "Connection",
      auth: true,
      body: bulkConnectionsBody,
      bodySchemaName: "BulkBody_ConnectionBody_",
      responses: { 200: { description: "Per action: the ids changed and the errors", schema: bulkResponse, schemaName: "BulkResponse" } },
      async handle({ body, res }) {
        res.json(await runBulkActions(body.actions, (action) => applyAction(context, action)));
      },
    }),
  ];
}
