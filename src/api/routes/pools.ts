// Airflow's pools, read from the runner (src/runner/pools.ts): default_pool and each exclusive
// resource as a one-slot pool with its occupant and queue. They come from runner.worker_concurrency
// and the DAGs' `exclusive`, so creating, changing or deleting one through the API is a 409 that says
// where each is set, never a silent success.
import { z } from "zod";
import { patternMatcher } from "../airflow-pattern.ts";
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { blankIsAbsent, limitParam, oneOrMany, pageOf, pageQuery } from "../schemas.ts";
import { DEFAULT_POOL, type PoolRecord } from "../../runner/index.ts";

const ORDER = ["id", "pool", "name"] as const;
const orderValue = z.enum([...ORDER, ...ORDER.map((f) => `-${f}` as const)]);
const text = z.preprocess(blankIsAbsent, z.string().max(250).optional());
const poolsQuery = pageQuery
  .extend({
    limit: limitParam(50),
    order_by: oneOrMany(orderValue).default(["id"]).describe("id is the pool's place: default_pool first, then the resources by name"),
    pool_name_pattern: text,
    pool_name_prefix_pattern: text,
  })
  .strict();
const poolName = z.string().min(1).max(256);
const poolBody = z.object({ name: poolName, slots: z.number().int().min(-1), description: z.string().max(1000).nullable().optional(), include_deferred: z.boolean().optional(), team_name: z.string().max(50).nullable().optional() }).strict();
const poolPatchBody = z.object({ pool: poolName.nullable().optional(), slots: z.number().int().min(-1).nullable().optional(), description: z.string().max(1000).nullable().optional(), include_deferred: z.boolean().nullable().optional(), team_name: z.string().max(50).nullable().optional() }).strict();
const poolResponse = z.object({
  name: z.string(), slots: z.number().int(), description: z.string().nullable(), include_deferred: z.boolean(),
  occupied_slots: z.number().int(), running_slots: z.number().int(), queued_slots: z.number().int(), scheduled_slots: z.number().int(),
  open_slots: z.number().int(), deferred_slots: z.number().int(), team_name: z.string().nullable(),
});
const poolCollection = z.object({ pools: z.array(poolResponse), total_entries: z.number().int() });

function serializePool(p: PoolRecord): z.infer<typeof poolResponse> {
  return {
    name: p.name, slots: p.slots, description: p.description, include_deferred: false,
    occupied_slots: p.occupied, running_slots: p.running, queued_slots: p.queued, scheduled_slots: 0,
    open_slots: Math.max(0, p.slots - p.occupied), deferred_slots: p.deferred, team_name: null,
  };
}

const readOnly = (name: string | undefined) =>
  new ApiProblem(
    409,
    `pools here are the runner's and read-only${name === undefined ? "" : ` ('${name}')`}: ${DEFAULT_POOL}'s slots are runner.worker_concurrency per runner (stand.yaml), and an exclusive resource is a DAG's \`exclusive\` option, always one slot`,
    { field: "name" },
  );

export function poolRoutes({ runner }: ApiContext): RouteSpec[] {
  const refused = { 409: { description: "Pools are read-only here" } };
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/pools",
      operationId: "get_pools",
      summary: "Pools: default_pool and each exclusive resource",
      description: "pool_name_pattern (ILIKE, | for or), pool_name_prefix_pattern; order_by id, pool or name, '-' for descending.",
      tag: "Pool",
      auth: false,
      query: poolsQuery,
      responses: { 200: { description: "A page of pools", schema: poolCollection, schemaName: "PoolCollectionResponse" } },
      async handle({ query, res }) {
        const byPattern = patternMatcher(query.pool_name_pattern);
        const prefixes = query.pool_name_prefix_pattern?.split("|");
        const all = (await runner.listPools()).map((p, id) => ({ p, id })).filter(({ p }) => byPattern(p.name) && (prefixes === undefined || prefixes.some((x) => p.name.startsWith(x))));
        const key = query.order_by[0] ?? "id";
        const field = key.replace(/^-/, "");
        all.sort((a, b) => (field === "id" ? a.id - b.id : a.p.name.localeCompare(b.p.name)) * (key.startsWith("-") ? -1 : 1));
        res.json({ pools: pageOf(all, query).map(({ p }) => serializePool(p)), total_entries: all.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/pools/{pool_name}",
      operationId: "get_pool",
      summary: "One pool",
      tag: "Pool",
      auth: false,
      params: z.object({ pool_name: poolName }).strict(),
      responses: { 200: { description: "The pool", schema: poolResponse, schemaName: "PoolResponse" }, 404: { description: "No such pool" } },
      async handle({ params, res }) {
        const pools = await runner.listPools();
        const found = pools.find((p) => p.name === params.pool_name);
        if (!found) throw new ApiProblem(404, `the pool with name '${params.pool_name}' was not found; the pools are ${pools.map((p) => p.name).join(", ")}`, { field: "pool_name" });
        res.json(serializePool(found));
      },
    }),
    defineRoute({
      method: "post", path: "/api/v2/pools", operationId: "post_pool", summary: "Create a pool (refused: pools are the runner's)", tag: "Pool", auth: true,
      body: poolBody, bodySchemaName: "PoolBody", responses: refused,
      handle({ body }) { throw readOnly(body.name); },
    }),
    defineRoute({
      method: "patch", path: "/api/v2/pools/{pool_name}", operationId: "patch_pool", summary: "Change a pool (refused: pools are the runner's)", tag: "Pool", auth: true,
      params: z.object({ pool_name: poolName }).strict(), query: z.object({ update_mask: z.unknown().optional() }).strict(),
      body: poolPatchBody, bodySchemaName: "PoolPatchBody", responses: refused,
      handle({ params }) { throw readOnly(params.pool_name); },
    }),
    defineRoute({
      method: "delete", path: "/api/v2/pools/{pool_name}", operationId: "delete_pool", summary: "Delete a pool (refused: pools are the runner's)", tag: "Pool", auth: true,
      params: z.object({ pool_name: poolName }).strict(), responses: refused,
      handle({ params }) { throw readOnly(params.pool_name); },
    }),
    defineRoute({
      method: "patch", path: "/api/v2/pools", operationId: "bulk_pools", summary: "Bulk pool changes (refused: pools are the runner's)", tag: "Pool", auth: true,
      body: z.object({ actions: z.array(z.object({ action: z.enum(["create", "update", "delete"]), entities: z.array(z.unknown()).max(1000) }).loose()).max(100) }).strict(),
      bodySchemaName: "BulkBody_PoolBody_", responses: refused,
      handle() { throw readOnly(undefined); },
    }),
  ];
}
