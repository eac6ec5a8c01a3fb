// GET /api/v2/dags, GET and PATCH /api/v2/dags/{dag_id}, GET .../details: the DAGs the runner knows,
// pausing, and each caller's favourite DAGs (POST …/favorite, …/unfavorite; is_favorite).
import { patternMatcher } from "../airflow-pattern.ts";
import type { Request, Response } from "express";
import { ownerOf } from "../audit.ts";
import { callerName } from "../caller.ts";
import type { ApiContext } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { z } from "zod";
import { ApiProblem } from "../problem.ts";
import { dagCollection, dagDetailsResponse, dagPatchBody, dagPatchQuery, dagPathParams, dagResponse, listDagsQuery, pageOf, patchDagsQuery, rangeOf, type ListDagsQuery } from "../schemas.ts";
import type { DagListFacts, DagSummary, RunnerService } from "../../runner/index.ts";
import { serializeDag, serializeDagDetails } from "../serialize.ts";

const unknownDag = { description: "Unknown DAG" };

export function dagRoutes({ runner, auth, dags: dagContext }: ApiContext): RouteSpec[] {
  /** The caller's favourite DAGs (callerName): none for a read without a token. */
  const favouritesOf = async (req: Request, res: Response): Promise<Set<string>> => {
    const caller = await callerName(auth, req, res);
    return caller === undefined ? new Set() : runner.favoriteDagIds(caller);
  };
  const serialize = (dag: DagSummary, favourites: Set<string>) => serializeDag(dag, dagContext, favourites.has(dag.dagId));

  return [
    defineRoute({
      method: "get",
      path: "/api/v2/dags",
      operationId: "get_dags",
      summary: "List DAGs",
      description:
        "Airflow's filters: paused, exclude_stale (default true), dag_id and display-name _pattern (ILIKE, | for or) and " +
        "_prefix_pattern, has_import_errors, last_dag_run_state, bundle_name, dag_run_start_date/dag_run_end_date ranges and " +
        "dag_run_state (DAGs with such a run), timetable_type, is_favorite (the caller's favourites: a login user's, or the " +
        "api_token's per X-Runner-Client; a call without a token has none, a bad token is 401/403). tags, owners, assets and bundle_version exist on " +
        "no DAG here: given, they match none. Each DAG says is_favorite for the caller (an extension: Airflow says it on a " +
        "DAG's details only). order_by: dag_id, dag_display_name, next_dagrun, state / last_run_state and " +
        "start_date / last_run_start_date (the latest run's), several keys, '-' for descending.",
      tag: "DAG",
      auth: false,
      query: listDagsQuery,
      responses: { 200: { description: "A page of DAGs", schema: dagCollection, schemaName: "DAGCollectionResponse" } },
      async handle({ query, req, res }) {
        const favourites = await favouritesOf(req, res);
        const all = await selectDags(runner, query, favourites);
        res.json({ dags: pageOf(all, query).map((dag) => serialize(dag, favourites)), total_entries: all.length });
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags",
      operationId: "patch_dags",
      summary: "Pause or unpause every DAG a selection names",
      description:
        "The DAGs GET /dags would list with the same filters (dag_id_pattern is required, as Airflow asks: `~` for every " +
        "DAG), this page of them (limit, offset), each paused or unpaused as DAGPatchBody says. Answers them after the change.",
      tag: "DAG",
      auth: true,
      query: patchDagsQuery,
      body: dagPatchBody,
      bodySchemaName: "DAGPatchBody",
      responses: { 200: { description: "The DAGs after the change", schema: dagCollection, schemaName: "DAGCollectionResponse" }, 400: { description: "No dag_id_pattern" } },
      async handle({ query, body, req, res }) {
        if (query.dag_id_pattern === undefined) throw new ApiProblem(400, "query parameter dag_id_pattern: required to patch several DAGs (~ for every DAG)", { field: "dag_id_pattern" });
        const favourites = await runner.favoriteDagIds(ownerOf(req, res));
        const chosen = pageOf(await selectDags(runner, { ...query, order_by: ["dag_id"] }, favourites), query);
        const changed = [];
        for (const dag of chosen) changed.push(await runner.setPaused(dag.dagId, body.is_paused));
        res.json({ dags: changed.map((dag) => serialize(dag, favourites)), total_entries: changed.length });
      },
    }),
    defineRoute({
      method: "delete",
      path: "/api/v2/dags/{dag_id}",
      operationId: "delete_dag",
      summary: "Delete a DAG's history",
      description:
        "Every run of the DAG (and the child runs they started) with their task instances, tries, logs and XCom. A stale DAG " +
        "(its file gone) goes too, with its versions and backfills; a DAG whose file is still there stays listed with no " +
        "runs, as Airflow's is parsed back at once. Every user's favourite mark of it goes. 409 while any of its runs has " +
        "not ended (mark them failed first). The event log keeps the deletion.",
      tag: "DAG",
      auth: true,
      params: dagPathParams,
      responses: { 200: { description: "Deleted (an empty object, as Airflow's)", schema: z.object({}) }, 404: unknownDag, 409: { description: "A run of the DAG has not ended" } },
      async handle({ params, res }) {
        await runner.deleteDag(params.dag_id);
        res.json({});
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}",
      operationId: "get_dag",
      summary: "Get a DAG",
      tag: "DAG",
      auth: false,
      params: dagPathParams,
      responses: { 200: { description: "The DAG", schema: dagResponse, schemaName: "DAGResponse" }, 404: unknownDag },
      async handle({ params, req, res }) {
        const dag = await runner.getDag(params.dag_id);
        res.json(serialize(dag, await favouritesOf(req, res)));
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dags/{dag_id}/details",
      operationId: "get_dag_details",
      summary: "Get a DAG with its details (params, timezone, active runs)",
      tag: "DAG",
      auth: false,
      params: dagPathParams,
      responses: { 200: { description: "The DAG's details", schema: dagDetailsResponse, schemaName: "DAGDetailsResponse" }, 404: unknownDag },
      async handle({ params, req, res }) {
        const dag = await runner.getDag(params.dag_id);
        const running = await runner.listRuns(params.dag_id, { limit: 1, offset: 0, state: "running" });
        const favourite = (await favouritesOf(req, res)).has(dag.dagId);
        res.json(serializeDagDetails(dag, { ...dagContext, activeRuns: running.totalEntries }, favourite));
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/v2/dags/{dag_id}",
      operationId: "patch_dag",
      summary: "Pause or unpause a DAG",
      description: "Airflow's DAGPatchBody; update_mask may name only is_paused.",
      tag: "DAG",
      auth: true,
      params: dagPathParams,
      query: dagPatchQuery,
      body: dagPatchBody,
      bodySchemaName: "DAGPatchBody",
      responses: { 200: { description: "The DAG after the change", schema: dagResponse, schemaName: "DAGResponse" }, 404: unknownDag },
      async handle({ params, body, req, res }) {
        const dag = await runner.setPaused(params.dag_id, body.is_paused);
        res.json(serialize(dag, await runner.favoriteDagIds(ownerOf(req, res))));
      },
    }),
    ...favouriteRoutes(runner),
  ];
}

/** Airflow 3's favourite DAGs, per caller (the event log's name for them: a login user, else the
 * api_token and its X-Runner-Client). Twice is a conflict either way, as Airflow's: 409. */
function favouriteRoutes(runner: RunnerService): RouteSpec[] {
  const calls = [
    { action: "favorite", summary: "Mark a DAG a favourite of the caller", conflict: "The DAG is already a favourite of the caller" },
    { action: "unfavorite", summary: "Unmark a favourite DAG of the caller", conflict: "The DAG is not a favourite of the caller" },
  ] as const;
  return calls.map(({ action, summary, conflict }) =>
    defineRoute({
      method: "post",
      path: `/api/v2/dags/{dag_id}/${action}`,
      operationId: `${action}_dag`,
      summary,
      description:
        "Favourites are per caller: a login user's own, the api_token's per X-Runner-Client (the event log's owner). GET " +
        "/dags?is_favorite=true lists them and is_favorite says it on each DAG. No body. The event log keeps each call.",
      tag: "DAG",
      auth: true,
      params: dagPathParams,
      responses: { 204: { description: action === "favorite" ? "Marked" : "Unmarked" }, 404: unknownDag, 409: { description: conflict } },
      async handle({ params, req, res }) {
        const user = ownerOf(req, res);
        if (action === "favorite") await runner.favoriteDag(params.dag_id, user);
        else await runner.unfavoriteDag(params.dag_id, user);
        res.status(204).end();
      },
    }),
  );
}

type DagSelection = Pick<ListDagsQuery, "tags" | "owners" | "dag_id_pattern" | "dag_id_prefix_pattern" | "exclude_stale" | "paused"> &
  Partial<Omit<ListDagsQuery, "tags" | "owners" | "dag_id_pattern" | "dag_id_prefix_pattern" | "exclude_stale" | "paused" | "limit" | "offset">>;

const prefixMatcher = (prefix: string | undefined) => (text: string) => prefix === undefined || prefix.split("|").some((p) => text.startsWith(p));
/** Airflow's timetable class names for this runner's two kinds of schedule. */
const timetableOf = (dag: DagSummary) => (dag.schedule === null ? "NullTimetable" : /^@?every|^\d+s$/.test(dag.schedule) ? "DeltaTriggerTimetable" : "CronTriggerTimetable");

/** The DAGs GET /dags lists (and PATCH /dags changes), filtered and sorted as Airflow's. */
async function selectDags(runner: RunnerService, q: DagSelection, favourites: ReadonlySet<string>): Promise<DagSummary[]> {
  const runFilter = {
    startDate: rangeOf<"dag_run_start_date", Date>(q, "dag_run_start_date"),
    endDate: rangeOf<"dag_run_end_date", Date>(q, "dag_run_end_date"),
    states: q.dag_run_state,
  };
  const wantsRuns = runFilter.startDate !== undefined || runFilter.endDate !== undefined || runFilter.states !== undefined;
  const facts: DagListFacts = await runner.dagListFacts(wantsRuns ? runFilter : null);
  const none =
    (q.tags !== undefined && q.tags.length > 0) ||
    (q.owners !== undefined && q.owners.length > 0) ||
    q.bundle_version !== undefined ||
    q.has_asset_schedule === true ||
    q.asset_dependency !== undefined;
  if (none) return [];
  const byId = patternMatcher(q.dag_id_pattern);
  const byName = patternMatcher(q.dag_display_name_pattern);
  const idPrefix = prefixMatcher(q.dag_id_prefix_pattern);
  const namePrefix = prefixMatcher(q.dag_display_name_prefix_pattern);
  const kept = (await runner.listDags()).filter(
    (dag) =>
      (q.paused === undefined || dag.isPaused === q.paused) &&
      !(q.exclude_stale && dag.isStale) &&
      byId(dag.dagId) && byName(dag.dagId) && idPrefix(dag.dagId) && namePrefix(dag.dagId) &&
      (q.has_import_errors === undefined || dag.hasImportErrors === q.has_import_errors) &&
      (q.last_dag_run_state === undefined || facts.latest.get(dag.dagId)?.state === q.last_dag_run_state) &&
      (q.bundle_name === undefined || (dag.latestVersion?.bundleName ?? "dags-folder") === q.bundle_name) &&
      (facts.withMatchingRun === null || facts.withMatchingRun.has(dag.dagId)) &&
      (q.is_favorite === undefined || favourites.has(dag.dagId) === q.is_favorite) &&
      (q.timetable_type === undefined || q.timetable_type.includes(timetableOf(dag))),
  );
  const keys = (q.order_by ?? ["dag_id"]).map((k) => ({ field: k.replace(/^-/, ""), descending: k.startsWith("-") }));
  const valueOf = (dag: DagSummary, field: string): string | number | null => {
    const last = facts.latest.get(dag.dagId);
    if (field === "state" || field === "last_run_state") return last?.state ?? null;
    if (field === "start_date" || field === "last_run_start_date") return last?.startDate?.getTime() ?? null;
    if (field === "next_dagrun") return null; // no DAG carries a next_dagrun here (its response says null)
    return dag.dagId;
  };
  return kept.sort((a, b) => {
    for (const key of [...keys, { field: "dag_id", descending: keys.at(-1)?.descending ?? false }]) {
      const x = valueOf(a, key.field);
      const y = valueOf(b, key.field);
      if (x === y) continue;
      // nulls last ascending, first descending (Postgres's default, as Airflow's SQL sorts)
      const order = x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
      return key.descending ? -order : order;
    }
    return 0;
  });
}
