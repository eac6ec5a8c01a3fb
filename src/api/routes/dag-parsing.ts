// PUT /api/v2/parseDagFile/{file_token}: asks for a DAG file to be parsed again now. Any runner of a
// pool records the request in Postgres; the one that parses (the DAG processor's leader) takes it.
import { userOf } from "../auth.ts";
import { type ApiContext, callerOf } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { fileTokenPathParams } from "../schemas.ts";

export function dagParsingRoutes({ runner, auth }: ApiContext): RouteSpec[] {
  return [
    defineRoute({
      method: "put",
      path: "/api/v2/parseDagFile/{file_token}",
      operationId: "reparse_dag_file",
      summary: "Parse a DAG file again now",
      description:
        "The token is a DAG's file_token. The request is recorded and the parsing runner parses the file at once " +
        "(a changed file makes a new version of its DAGs). Answers 201 with null, as Airflow does.",
      tag: "DAG Parsing",
      auth: true,
      params: fileTokenPathParams,
      responses: {
        201: { description: "The parse was requested (the body is null)", contentType: "application/json" },
        404: { description: "Not a file_token this runner issued, or no DAG has that file" },
      },
      async handle({ params, req, res }) {
        const fileloc = auth.readFileToken(params.file_token);
        const known = fileloc !== undefined && (await runner.listDags()).some((dag) => dag.fileloc === fileloc);
        if (fileloc === undefined || !known) {
          throw new ApiProblem(404, "file_token: not the file_token of a DAG this runner serves (or it was altered)", { field: "file_token" });
        }
        const user = userOf(res.locals);
        await runner.requestParse(fileloc, `api:${callerOf(req)}${user === undefined ? "" : `:user:${user}`}`);
        res.status(201).json(null);
      },
    }),
  ];
}
