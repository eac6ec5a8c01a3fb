// /api/v2/backfills: Airflow 3's backfills. A scheduled DAG gets runs (type backfill) for its
// schedule's past instants between from_date and to_date, at most max_active_runs of them active at
// once; pause, unpause and cancel steer it (src/runner/backfills.ts does the work).
import type { Response } from "express";
import { z } from "zod";
import type { ApiContext } from "../context.ts";
import { ownerOf } from "../audit.ts";
import { userOf } from "../auth.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { backfillCollection, backfillResponse, dryRunBackfillCollection } from "../responses.ts";
import { dagIdSchema, inputIsoDate, limitParam, pageQuery } from "../schemas.ts";
import {
  BACKFILL_SORT_FIELDS,
  BackfillRefusedError,
  ConfValidationError,
  MAX_BACKFILL_DATES,
  REPROCESS_BEHAVIORS,
  sortKeys,
  type BackfillRecord,
  type BackfillRequest,
  type RunConf,
} from "../../runner/index.ts";

const date = inputIsoDate.transform((text) => new Date(text));

/** Airflow's BackfillPostBody. */
const backfillPostBody = z
  .object({
    dag_id: dagIdSchema,
    from_date: date.describe("the first logical date to consider (inclusive)"),
    to_date: date.describe("the last logical date to consider (inclusive); instants still to come are left to the scheduler"),
    run_backwards: z.boolean().default(false).describe("newest date first"),
    dag_run_conf: z.record(z.string(), z.unknown()).nullable().optional().describe("every run's conf, checked against the DAG's params"),
    reprocess_behavior: z.enum(REPROCESS_BEHAVIORS).default("none").describe("none: skip a date that has a run; failed: run a failed one again; completed: run any ended one again"),
    max_active_runs: z.number().int("must be a whole number").min(1, "must be at least 1").max(1000, "must be at most 1000").default(10),
    run_on_latest_version: z.boolean().nullable().optional().describe("clear reprocessed runs onto the DAG's latest version (default true, Airflow's for backfills)"),
  })
  .strict();
type BackfillPostBody = z.output<typeof backfillPostBody>;

const orderValue = z.enum([...BACKFILL_SORT_FIELDS, ...BACKFILL_SORT_FIELDS.map((f) => `-${f}` as const)]);
const listQuery = pageQuery
  .extend({
    dag_id: dagIdSchema.describe("the DAG whose backfills to list (required, as Airflow's)"),
    limit: limitParam(50),
    order_by: z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(orderValue)).default(["id"]),
  })
  .strict();
const backfillPathParams = z.object({ backfill_id: z.coerce.number({ error: "must be a number" }).int("must be a whole number").min(0).max(9_007_199_254_740_991) }).strict();

const one = { schema: backfillResponse, schemaName: "BackfillResponse" };

function serializeBackfill(b: BackfillRecord): z.infer<typeof backfillResponse> {
  return {
    id: b.id,
    dag_id: b.dagId,
    from_date: b.fromDate.toISOString(),
    to_date: b.toDate.toISOString(),
    dag_run_conf: b.dagRunConf,
    is_paused: b.isPaused,
    reprocess_behavior: b.reprocessBehavior,
    max_active_runs: b.maxActiveRuns,
    created_at: b.createdAt.toISOString(),
    completed_at: b.completedAt === null ? null : b.completedAt.toISOString(),
    updated_at: b.updatedAt.toISOString(),
    dag_display_name: b.dagId,
    run_backwards: b.runBackwards,
    run_on_latest_version: b.runOnLatestVersion,
  };
}

/** The backfill's answer, its DAG kept for the event log (the path of pause, unpause and cancel names only the backfill). */
function audited(res: Response, b: BackfillRecord): z.infer<typeof backfillResponse> {
  res.locals.auditDagId = b.dagId;
  return serializeBackfill(b);
}

function requestOf(body: BackfillPostBody, user: string | undefined): BackfillRequest {
  return {
    dagId: body.dag_id,
    fromDate: body.from_date,
    toDate: body.to_date,
    runBackwards: body.run_backwards,
    dagRunConf: (body.dag_run_conf ?? null) as RunConf | null,
    reprocessBehavior: body.reprocess_behavior,
    maxActiveRuns: body.max_active_runs,
    runOnLatestVersion: body.run_on_latest_version ?? true,
    triggeringUserName: user ?? null,
  };
}

/** Airflow answers what no backfill can serve (no schedule, a bad window, conf against the params)
 * with its validation error, 422; the field names the body's. */
async function asValidation<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof BackfillRefusedError) throw new ApiProblem(422, err.message, { field: err.field, location: "body" });
    if (err instanceof ConfValidationError) {
      const field = err.field === "(root)" ? "dag_run_conf" : `dag_run_conf.${err.field}`;
      throw new ApiProblem(422, err.message, { field, errors: [{ field, message: err.problem }], location: "body" });
    }
    throw err;
  }
}

const WINDOW =
  `The dates are the schedule's instants from from_date to to_date (both included) that are already past: a cron's fire ` +
  `times, or for an interval schedule from_date, from_date + interval, … (at most ${MAX_BACKFILL_DATES}). A date that has a ` +
  "run still queued or running is skipped; one with an ended run is skipped (reprocess_behavior none), run again if it " +
  "failed (failed) or whatever its end (completed): the run is cleared, becomes a backfill run and takes dag_run_conf when given.";
const REFUSALS = "422 for a DAG without a schedule, from_date after to_date or in the future, too many dates, or a dag_run_conf the DAG's params refuse.";

export function backfillRoutes({ runner }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/backfills",
      operationId: "list_backfills",
      summary: "A DAG's backfills",
      description: "dag_id is required, as Airflow's; order_by id or -id (the default: id).",
      tag: "Backfill",
      auth: false,
      query: listQuery,
      responses: { 200: { description: "One page of the DAG's backfills", schema: backfillCollection, schemaName: "BackfillCollectionResponse" } },
      async handle({ query: q, res }) {
        const page = await runner.listBackfills({ dagId: q.dag_id, limit: q.limit, offset: q.offset, orderBy: sortKeys(q.order_by, BACKFILL_SORT_FIELDS) });
        res.json({ backfills: page.items.map(serializeBackfill), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/backfills",
      operationId: "create_backfill",
      summary: "Backfill a scheduled DAG: runs for its past logical dates",
      description:
        `Runs of type backfill (ids backfill__<logical date>) for the window's dates, in order (newest first with ` +
        `run_backwards), made as room opens: at most max_active_runs (default 10) of them queued or running at once, ` +
        `and the first ones before the answer. The DAG's own max_active_runs still bounds how many of its runs run. ${WINDOW} ` +
        "A paused DAG is accepted, as Airflow does: the backfill's runs wait queued until the DAG is unpaused. 404 for an " +
        `unknown DAG, 409 when it has a backfill not completed (one at a time) or its file is gone. ${REFUSALS}`,
      tag: "Backfill",
      auth: true,
      body: backfillPostBody,
      bodySchemaName: "BackfillPostBody",
      responses: {
        200: { description: "The backfill, its first runs made", ...one },
        404: { description: "Unknown DAG" },
        409: { description: "The DAG has a backfill not completed, or is stale" },
        422: { description: "No schedule, a bad window, too many dates, or conf the DAG refuses" },
      },
      async handle({ body, res }) {
        const created = await asValidation(() => runner.createBackfill(requestOf(body, userOf(res.locals))));
        res.json(serializeBackfill(created));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/backfills/dry_run",
      operationId: "create_backfill_dry_run",
      summary: "The logical dates a backfill would run now, creating nothing",
      description: `The dates create_backfill would run, in their order; skipped dates are left out. ${WINDOW} ${REFUSALS}`,
      tag: "Backfill",
      auth: true,
      audit: false,
      body: backfillPostBody,
      bodySchemaName: "BackfillPostBody",
      responses: {
        200: { description: "The dates", schema: dryRunBackfillCollection, schemaName: "DryRunBackfillCollectionResponse" },
        404: { description: "Unknown DAG" },
        409: { description: "The DAG is stale" },
        422: { description: "No schedule, a bad window, too many dates, or conf the DAG refuses" },
      },
      async handle({ body, res }) {
        const dates = await asValidation(() => runner.dryRunBackfill(requestOf(body, userOf(res.locals))));
        res.json({ backfills: dates.map((d) => ({ logical_date: d.toISOString(), partition_key: null, partition_date: null })), total_entries: dates.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/backfills/{backfill_id}",
      operationId: "get_backfill",
      summary: "One backfill",
      tag: "Backfill",
      auth: false,
      params: backfillPathParams,
      responses: { 200: { description: "The backfill", ...one }, 404: { description: "No such backfill" } },
      async handle({ params, res }) {
        res.json(serializeBackfill(await runner.getBackfill(params.backfill_id)));
      },
    }),
    defineRoute({
      method: "put",
      path: "/api/v2/backfills/{backfill_id}/pause",
      operationId: "pause_backfill",
      summary: "Pause a backfill: no new runs are made, the active ones finish",
      tag: "Backfill",
      auth: true,
      params: backfillPathParams,
      responses: { 200: { description: "The backfill, paused", ...one }, 404: { description: "No such backfill" }, 409: { description: "It has completed" } },
      async handle({ params, res }) {
        res.json(audited(res, await runner.setBackfillPaused(params.backfill_id, true)));
      },
    }),
    defineRoute({
      method: "put",
      path: "/api/v2/backfills/{backfill_id}/unpause",
      operationId: "unpause_backfill",
      summary: "Unpause a backfill: its next runs are made at once",
      tag: "Backfill",
      auth: true,
      params: backfillPathParams,
      responses: { 200: { description: "The backfill, unpaused", ...one }, 404: { description: "No such backfill" }, 409: { description: "It has completed" } },
      async handle({ params, res }) {
        res.json(audited(res, await runner.setBackfillPaused(params.backfill_id, false)));
      },
    }),
    defineRoute({
      method: "put",
      path: "/api/v2/backfills/{backfill_id}/cancel",
      operationId: "cancel_backfill",
      summary: "Cancel a backfill: it completes, its queued runs fail, its running ones finish",
      description: "As Airflow's: the backfill is paused and completed at once, and its runs that have not started are marked failed.",
      tag: "Backfill",
      auth: true,
      params: backfillPathParams,
      responses: { 200: { description: "The backfill, completed", ...one }, 404: { description: "No such backfill" }, 409: { description: "It has completed already" } },
      async handle({ params, req, res }) {
        res.json(audited(res, await runner.cancelBackfill(params.backfill_id, ownerOf(req, res))));
      },
    }),
  ];
}
