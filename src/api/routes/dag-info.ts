// What Airflow's clients read about the DAGs beside the DAGs themselves: run counts per state
// (dagStats), a DAG's source at a version (dagSources), and the API's version.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "../../config/index.ts";
import { errorCode } from "../../errors.ts";
import { RUN_STATES, type DagSummary } from "../../runner/index.ts";
import { API_VERSION } from "../version.ts";
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import {
  dagIdSchema,
  dagSourceQuery,
  dagSourceResponse,
  dagStatsCollection,
  dagStatsQuery,
  versionResponse,
} from "../schemas.ts";
import { z } from "zod";

/** A DAG id, or (as Airflow 2's dagSources/{file_token}) a file token this API handed out. */
const dagSourcePathParams = z.object({ dag_id: z.string().min(1).max(2000).describe("a DAG id, or a DAG's file_token") }).strict();

export function dagInfoRoutes({ runner, auth }: ApiContext): RouteSpec[] {
  /** The DAG a dagSources path names: by id, else by the file its token signs. */
  async function dagForSource(idOrToken: string): Promise<DagSummary> {
    if (dagIdSchema.safeParse(idOrToken).success) {
      const byId = (await runner.listDags()).find((dag) => dag.dagId === idOrToken);
      if (byId) return byId;
    }
    const fileloc = auth.readFileToken(idOrToken);
    const byFile = fileloc === undefined ? undefined : (await runner.listDags()).find((dag) => dag.fileloc === fileloc);
    if (!byFile) throw new ApiProblem(404, `no DAG '${idOrToken.slice(0, 250)}' (and it is not a file_token this runner issued)`, { field: "dag_id" });
    return byFile;
  }

  /** The source of a DAG's own file as it is now; only files under the repository are read. */
  async function fileSourceOf(dag: DagSummary): Promise<string | null> {
    const file = path.resolve(repoRoot, dag.fileloc);
    if (!file.startsWith(repoRoot + path.sep)) return null;
    try {
      return await readFile(file, "utf8");
    } catch (err) {
      // a file moved or deleted since the DAG was loaded has no source to show; anything else is a fault
      if (errorCode(err) === "ENOENT") return null;
      throw err;
    }
  }

  return [
    defineRoute({
      method: "get",
      path: "/api/v2/dagStats",
      operationId: "get_dag_stats",
      summary: "Runs per state of each DAG",
      tag: "DagStats",
      auth: false,
      query: dagStatsQuery,
      responses: {
        200: { description: "Every DAG (or those named), a count per run state", schema: dagStatsCollection, schemaName: "DagStatsCollectionResponse" },
        404: { description: "A DAG named in dag_ids is unknown" },
      },
      async handle({ query, res }) {
        const dags = query.dag_ids ? await Promise.all(query.dag_ids.map((id) => runner.getDag(id))) : await runner.listDags();
        const stats = await Promise.all(
          dags.map(async (dag) => ({
            dag_id: dag.dagId,
            dag_display_name: dag.dagId,
            stats: await Promise.all(
              RUN_STATES.map(async (state) => ({ state, count: (await runner.listRuns(dag.dagId, { limit: 1, offset: 0, state })).totalEntries })),
            ),
          })),
        );
        res.json({ dags: stats, total_entries: stats.length });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/dagSources/{dag_id}",
      operationId: "get_dag_source",
      summary: "The source file of a DAG",
      description:
        "By DAG id (Airflow 3), or by the DAG's file_token (Airflow 2). The source stored with the version (version_number, " +
        "the latest when absent); a DAG given in code has none stored, so without version_number its file as it is now is read. " +
        "JSON by default; 'Accept: text/plain' gives the source as is.",
      tag: "DagSource",
      auth: false,
      params: dagSourcePathParams,
      query: dagSourceQuery,
      responses: {
        200: { description: "The DAG's source (content null when the version has none stored, or its file cannot be read)", schema: dagSourceResponse, schemaName: "DAGSourceResponse" },
        404: { description: "Unknown DAG, file token or version" },
      },
      async handle({ params, query, req, res }) {
        const dag = await dagForSource(params.dag_id);
        const stored = await runner.getDagSource(dag.dagId, query.version_number ?? null);
        const content = stored.content ?? (query.version_number === undefined ? await fileSourceOf(dag) : null);
        if (req.accepts(["application/json", "text/plain"]) === "text/plain") {
          if (content === null) {
            const why = query.version_number === undefined ? `none is stored and its file (${dag.fileloc}) cannot be read` : `none is stored with version ${query.version_number}`;
            throw new ApiProblem(404, `no source of DAG '${dag.dagId}': ${why}`, { field: query.version_number === undefined ? "dag_id" : "version_number" });
          }
          res.type("text/plain; charset=utf-8").send(content);
          return;
        }
        res.json({ content, dag_id: dag.dagId, version_number: stored.versionNumber, dag_display_name: dag.dagId });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/version",
      operationId: "get_version",
      summary: "The API's version",
      tag: "Version",
      auth: false,
      responses: { 200: { description: "Version", schema: versionResponse, schemaName: "VersionInfo" } },
      handle({ res }) {
        res.json({ version: API_VERSION, git_version: null });
      },
    }),
  ];
}
