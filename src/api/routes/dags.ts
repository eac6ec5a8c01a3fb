// GET /api/v2/dags, GET and PATCH /api/v2/dags/{dag_id}, GET .../details: the DAGs the runner knows,
// and pausing.
import { patternMatcher } from "../airflow-pattern.ts";
import type { ApiContext } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { z } from "zod";
import { ApiProblem } from "../problem.ts";
import { dagCollection, dagDetailsResponse, dagPatchBody, dagPatchQuery, dagPathParams, dagResponse, listDagsQuery, pageOf, patchDagsQuery, rangeOf, type ListDagsQuery } from "../schemas.ts";
import type { DagListFacts, DagSummary, RunnerService } from "../../runner/index.ts";
import { serializeDag, serializeDagDetails } from "../serialize.ts";

const unknownDag = { description: "Unknown DAG" };

export function dagRoutes({ runner, dags: dagContext }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/dags",
      operationId: "get_dags",
      summary: "List DAGs",
      description:
        "Airflow's filters: paused, exclude_stale (default true), dag_id and display-name _pattern (ILIKE, | for or) and " +
        "_prefix_pattern, has_import_errors, last_dag_run_state, bundle_name, dag_run_start_date/dag_run_end_date ranges and " +
        "dag_run_state (DAGs with such a run), timetable_type. tags, owners, assets, bundle_version and favourites exist on no " +
        "DAG here: given, they match none. order_by: dag_id, dag_display_name, next_dagrun, state / last_run_state and " +
        "start_date / last_run_start_date (the latest run's), several keys, '-' for descending.",
      tag: "DAG",
      auth: false,
      query: listDagsQuery,
      responses: { 200: { description: "A page of DAGs", schema: dagCollection, schemaName: "DAGCollectionResponse" } },
      async handle({ query, res }) {
        const all = await selectDags(runner, query);
        res.json({ dags: pageOf(all, query).map((dag) => serializeDag(dag, dagContext)), total_entries: all.length });
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
      async handle({ query, body, res }) {
        if (query.dag_id_pattern === undefined) throw new ApiProblem(400, "query parameter dag_id_pattern: required to patch several DAGs (~ for every DAG)", { field: "dag_id_pattern" });
        const chosen = pageOf(await selectDags(runner, { ...query, order_by: ["dag_id"] }), query);
        const changed = [];
        for (const dag of chosen) changed.push(await runner.setPaused(dag.dagId, body.is_paused));
        res.json({ dags: changed.map((dag) => serializeDag(dag, dagContext)), total_entries: changed.length });
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
        "runs, as Airflow's is parsed back at once. 409 while any of its runs has not ended (mark them failed first). The " +
        "event log keeps the deletion.",
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
      async handle({ params, res }) {
        res.json(serializeDag(await runner.getDag(params.dag_id), dagContext));
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
      async handle({ params, res }) {
        const dag = await runner.getDag(params.dag_id);
        const running = await runner.listRuns(params.dag_id, { limit: 1, offset: 0, state: "running" });
        res.json(serializeDagDetails(dag, { ...dagContext, activeRuns: running.totalEntries }));
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
      async handle({ params, body, res }) {
        res.json(serializeDag(await runner.setPaused(params.dag_id, body.is_paused), dagContext));
      },
    }),
  ];
}

type DagSelection = Pick<ListDagsQuery, "tags" | "owners" | "dag_id_pattern" | "dag_id_prefix_pattern" | "exclude_stale" | "paused"> &
  Partial<Omit<ListDagsQuery, "tags" | "owners" | "dag_id_pattern" | "dag_id_prefix_pattern" | "exclude_stale" | "paused" | "limit" | "offset">>;

const prefixMatcher = (prefix: string | undefined) => (text: string) => prefix === undefined || prefix.split("|").some((p) => text.startsWith(p));
/** Airflow's timetable class names for this runner's two kinds of schedule. */
const timetableOf = (dag: DagSummary) => (dag.schedule === null ? "NullTimetable" : /^@?every|^\d+s$/.test(dag.schedule) ? "DeltaTriggerTimetable" : "CronTriggerTimetable");

/** The DAGs GET /dags lists (and PATCH /dags changes), filtered and sorted as Airflow's. */
async function selectDags(runner: RunnerService, q: DagSelection): Promise<DagSummary[]> {
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
    q.asset_dependency !== undefined ||
    q.is_favorite === true;
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
