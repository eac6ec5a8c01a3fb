// DAG runs: trigger, list, get, mark failed/success (PATCH), and wait for a run to finish.
import { type ApiContext, callerOf } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import type { Request, Response } from "express";
import { z } from "zod";
import { type JsonValue, type RunConf, type RunnerService, TERMINAL_RUN_STATES } from "../../runner/index.ts";
import { ApiProblem } from "../problem.ts";
import {
  dagOrAllPathParams,
  dagPathParams,
  dagRunsBatchBody,
  dagRunPatchBody,
  dagRunPatchQuery,
  dagRunCollection,
  dagRunResponse,
  listRunsQuery,
  runPathParams,
  triggerRunBody,
  waitQuery,
} from "../schemas.ts";
import { serializeRun, triggeredByWithUser } from "../serialize.ts";
import { dagIdsOf, runListFromBatch, runListFromQuery } from "../list-filters.ts";
import { userOf } from "../auth.ts";

const runNotFound = { description: "Unknown DAG or run" };

export function dagRunRoutes({ runner, shutdownSignal }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/api/v2/dags/{dag_id}/dagRuns",
      operationId: "trigger_dag_run",
      summary: "Trigger a DAG run",
      description:
        "Creates a queued run. logical_date is required-but-nullable in Airflow 3; here it may also be omitted. " +
        "conf is validated against the DAG's params: a wrong type answers 400 naming the field.",
      tag: "DagRun",
      auth: true,
      params: dagPathParams,
      body: triggerRunBody,
      bodySchemaName: "TriggerDAGRunPostBody",
      responses: {
        200: { description: "The new run (queued)", schema: dagRunResponse, schemaName: "DAGRunResponse" },
        400: { description: "conf does not match the DAG's params" },
        404: { description: "Unknown DAG" },
        409: { description: "A run with this dag_run_id exists" },
      },
      async handle({ params, body, req, res }) {
        const caller = callerOf(req);
        const run = await runner.triggerRun(params.dag_id, {
          runId: body.dag_run_id ?? undefined,
          logicalDate: body.logical_date ? new Date(body.logical_date) : null,
          conf: (body.conf ?? {}) as RunConf,
          note: body.note ?? null,
          runType: "manual",
          triggeredBy: triggeredByWithUser(caller === "cli" ? "cli" : "rest_api", userOf(res.locals)),
        });
        res.locals.auditRunId = run.runId;
        res.json(serializeRun(run));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns",
      operationId: "get_dag_runs",
      summary: "List a DAG's runs, or every DAG's (~)",
      description:
        "Airflow's filters: ranges (_gte, _gt, _lte, _lt) on run_after, logical_date, start_date, end_date, updated_at and " +
        "duration (seconds; a run not ended has none); state, run_type and dag_version lists; conf_contains; _pattern " +
        "(ILIKE, | for or) and _prefix_pattern on run_id, dag_id and triggering_user_name. order_by takes several keys, " +
        "'-' for descending, then the run's id. Filters on partitions, assets and bundle versions match no run here.",
      tag: "DagRun",
      auth: false,
      params: dagOrAllPathParams,
      query: listRunsQuery,
      responses: {
        200: { description: "One page of runs", schema: dagRunCollection, schemaName: "DAGRunCollectionResponse" },
        404: { description: "Unknown DAG" },
      },
      async handle({ params, query, res }) {
        if (params.dag_id !== "~") await runner.getDag(params.dag_id);
        const page = await runner.findRuns(runListFromQuery(query, dagIdsOf(params.dag_id)));
        res.json({ dag_runs: page.items.map(serializeRun), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/v2/dags/{dag_id}/dagRuns/list",
      operationId: "get_list_dag_runs_batch",
      summary: "List runs across DAGs (a body of filters)",
      description:
        "Airflow's DAGRunsBatchBody: dag_ids, states, the date and duration ranges, conf_contains, page_offset and " +
        "page_limit, order_by (one key or several, comma separated). With a DAG id in the path instead of ~, only its runs.",
      tag: "DagRun",
      auth: false,
      params: dagOrAllPathParams,
      body: dagRunsBatchBody,
      bodySchemaName: "DAGRunsBatchBody",
      audit: false,
      responses: {
        200: { description: "One page of runs", schema: dagRunCollection, schemaName: "DAGRunCollectionResponse" },
        404: { description: "Unknown DAG" },
        422: { description: "A malformed body or an unknown order_by key" },
      },
      async handle({ params, body, res }) {
        if (params.dag_id !== "~") await runner.getDag(params.dag_id);
        const page = await runner.findRuns(runListFromBatch(body, dagIdsOf(params.dag_id)));
        res.json({ dag_runs: page.items.map(serializeRun), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}",
      operationId: "get_dag_run",
      summary: "Get a DAG run",
      tag: "DagRun",
      auth: false,
      params: runPathParams,
      responses: { 200: { description: "The run", schema: dagRunResponse, schemaName: "DAGRunResponse" }, 404: runNotFound },
      async handle({ params, res }) {
        res.json(serializeRun(await runner.getRun(params.dag_id, params.dag_run_id)));
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}",
      operationId: "patch_dag_run",
      summary: "Mark a run failed or success, or set its note",
      description:
        "Airflow's body. state failed or success ends the run now, with its open child runs (deepest first): running " +
        "tries are stopped and their late results refused, unfinished tasks take the state, and a run holding an " +
        "exclusive resource frees it. A terminal run may be marked too. state queued is refused (400): clear task " +
        "instances to run tasks again. update_mask limits which body fields apply.",
      tag: "DagRun",
      auth: true,
      params: runPathParams,
      query: dagRunPatchQuery,
      body: dagRunPatchBody,
      bodySchemaName: "DAGRunPatchBody",
      responses: {
        200: { description: "The run after the change", schema: dagRunResponse, schemaName: "DAGRunResponse" },
        400: { description: "state queued, or a malformed body" },
        404: runNotFound,
      },
      async handle({ params, query, body, req, res }) {
        const mask = query.update_mask === undefined ? undefined : new Set(query.update_mask);
        const wants = (field: "state" | "note") => body[field] !== undefined && (mask === undefined || mask.has(field));
        if (wants("state") && body.state === "queued") {
          throw new ApiProblem(400, "state: queued is not supported here; POST .../clearTaskInstances runs tasks again in the same run", { field: "state" });
        }
        const state = wants("state") && (body.state === "failed" || body.state === "success") ? body.state : undefined;
        const run = await runner.patchRun(
          params.dag_id,
          params.dag_run_id,
          { state, note: wants("note") ? (body.note ?? null) : undefined },
          { by: callerOf(req) },
        );
        res.json(serializeRun(run));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/dagRuns/{dag_run_id}/wait",
      operationId: "wait_dag_run_until_finished",
      summary: "Wait until a run is terminal",
      description:
        "Airflow's form (with `interval`): the run's state as NDJSON, `{\"state\": …}` every `interval` seconds and a last line " +
        "as soon as the run ends (woken by its end, not by the interval), carrying `results` (each `result` task's XCom " +
        "return_value) when asked. A client that accepts only application/json (the official client) gets the last line " +
        "alone, as one JSON document. Without `interval` (extension): the run itself as soon as it is success or failed, or " +
        "after `timeout` seconds (default 60) as it is then (still 200: check `state`; the header X-Run-Terminal says).",
      tag: "DagRun",
      auth: false,
      params: runPathParams,
      query: waitQuery,
      responses: {
        200: { description: "The run's states until it ended (NDJSON), or the run when it ended or at the timeout", schema: z.unknown() },
        400: { description: "`result` without `interval`" },
        404: runNotFound,
      },
      async handle({ params, query, req, res }) {
        if (query.result !== undefined && query.interval === undefined) {
          throw new ApiProblem(400, "query parameter result: needs interval (Airflow's streamed form)", { field: "result" });
        }
        // Fail fast with 404 before holding the connection open.
        await runner.getRun(params.dag_id, params.dag_run_id);
        const stop = new AbortController();
        const onClose = () => stop.abort();
        res.on("close", onClose);
        shutdownSignal.addEventListener("abort", onClose);
        try {
          if (query.interval === undefined) {
            const run = await runner.waitForRun(params.dag_id, params.dag_run_id, { timeoutMs: Math.round((query.timeout ?? 60) * 1000), signal: stop.signal });
            if (res.writableEnded || res.destroyed) return;
            res.setHeader("X-Run-Terminal", String(TERMINAL_RUN_STATES.has(run.state)));
            res.json(serializeRun(run));
            return;
          }
          await streamStates(runner, params, { intervalMs: query.interval * 1000, timeoutMs: query.timeout === undefined ? null : query.timeout * 1000, results: query.result ?? [] }, req, res, stop.signal);
        } finally {
          res.off("close", onClose);
          shutdownSignal.removeEventListener("abort", onClose);
        }
      },
    }),
  ];
}

interface StreamOptions {
  intervalMs: number;
  timeoutMs: number | null;
  results: readonly string[];
}

/** Airflow's NDJSON wait: a state line per interval, the last one when the run ends (or at the
 * extension's timeout, without results). A JSON-only client gets that last line alone. */
async function streamStates(
  runner: RunnerService,
  at: { dag_id: string; dag_run_id: string },
  options: StreamOptions,
  req: Request,
  res: Response,
  signal: AbortSignal,
): Promise<void> {
  const ndjson = req.accepts(["application/x-ndjson", "application/json"]) !== "application/json" || !req.get("accept");
  const deadline = options.timeoutMs === null ? Infinity : Date.now() + options.timeoutMs;
  if (ndjson) {
    res.status(200).type("application/x-ndjson");
    res.flushHeaders();
  }
  let run = await runner.getRun(at.dag_id, at.dag_run_id);
  while (!TERMINAL_RUN_STATES.has(run.state) && Date.now() < deadline && !signal.aborted) {
    if (ndjson) res.write(`${JSON.stringify({ state: run.state })}\n`);
    run = await runner.waitForRun(at.dag_id, at.dag_run_id, { timeoutMs: Math.max(0, Math.min(options.intervalMs, deadline - Date.now())), signal });
  }
  if (res.writableEnded || res.destroyed || signal.aborted) return;
  const last: { state: string; results?: Record<string, JsonValue> } = { state: run.state };
  if (TERMINAL_RUN_STATES.has(run.state) && options.results.length > 0) {
    last.results = await runner.returnValues(at.dag_id, at.dag_run_id, options.results);
  }
  if (ndjson) res.end(`${JSON.stringify(last)}\n`);
  else res.json(last);
}
