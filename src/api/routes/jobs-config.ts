// GET /api/v2/jobs (each runner process as Airflow's SchedulerJob, src/runner/jobs.ts) and GET
// /api/v2/config[/section/{s}/option/{o}] (the runner's effective configuration, by section, only
// where runner.api.expose_config allows it, every secret-looking option masked as Airflow masks it).
import type { Request, Response } from "express";
import { z } from "zod";
import { isSensitiveName } from "../audit.ts";
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { blankIsAbsent, limitParam, oneOrMany, pageQuery, queryBoolean, rangeOf } from "../schemas.ts";
import { JOB_SORT_FIELDS, JOB_TYPE, sortKeys, type JobRecord } from "../../runner/index.ts";

const HIDDEN = "< hidden >";
const text = z.preprocess(blankIsAbsent, z.string().max(250).optional());
const date = z.preprocess(blankIsAbsent, z.iso.datetime({ offset: true, error: "must be an ISO 8601 date-time with an offset" }).transform((t) => new Date(t)).optional());
const jobOrderValue = z.enum([...JOB_SORT_FIELDS, ...JOB_SORT_FIELDS.map((f) => `-${f}` as const)]);

const jobsQuery = pageQuery
  .extend({
    limit: limitParam(50),
    is_alive: z.preprocess(blankIsAbsent, queryBoolean.optional()),
    start_date_gte: date, start_date_gt: date, start_date_lte: date, start_date_lt: date,
    end_date_gte: date, end_date_gt: date, end_date_lte: date, end_date_lt: date,
    order_by: oneOrMany(jobOrderValue).default(["id"]),
    job_state: text.describe("running (beating), success (stopped cleanly) or failed (stopped beating: killed)"),
    job_type: text.describe(`every job here is a ${JOB_TYPE}`),
    hostname: text,
    executor_class: text.describe("runners run their tasks themselves (no executor class): any value matches none"),
  })
  .strict();

const jobResponse = z.object({
  id: z.number().int(),
  dag_id: z.string().nullable(),
  state: z.string().nullable(),
  job_type: z.string().nullable(),
  start_date: z.string().nullable(),
  end_date: z.string().nullable(),
  latest_heartbeat: z.string().nullable(),
  executor_class: z.string().nullable(),
  hostname: z.string().nullable(),
  unixname: z.string().nullable(),
  dag_display_name: z.string().nullable(),
});

function serializeJob(j: JobRecord): z.infer<typeof jobResponse> {
  return {
    id: j.id,
    dag_id: null,
    state: j.state,
    job_type: JOB_TYPE,
    start_date: j.startDate.toISOString(),
    end_date: j.endDate?.toISOString() ?? null,
    latest_heartbeat: j.latestHeartbeat.toISOString(),
    executor_class: null,
    hostname: j.hostname,
    unixname: null,
    dag_display_name: null,
  };
}

type ConfigOption = { key: string; value: string };
type ConfigSection = { name: string; options: ConfigOption[] };

/** The configuration as Airflow's sections: each top-level key a section, nested keys joined by '.'. */
export function configSections(config: unknown): ConfigSection[] {
  if (config === null || typeof config !== "object") return [];
  return Object.entries(config as Record<string, unknown>).map(([name, value]) => {
    const options: ConfigOption[] = [];
    const walk = (prefix: string, v: unknown, secret: boolean): void => {
      const hidden = secret || isSensitiveName(prefix);
      if (v !== null && typeof v === "object" && !Array.isArray(v)) {
        for (const [k, inner] of Object.entries(v as Record<string, unknown>)) walk(prefix === "" ? k : `${prefix}.${k}`, inner, hidden);
        return;
      }
      options.push({ key: prefix === "" ? name : prefix, value: hidden ? HIDDEN : typeof v === "string" ? v : JSON.stringify(v) ?? "" });
    };
    walk("", value, isSensitiveName(name));
    return { name, options };
  });
}

/** JSON, as Airflow answers an Accept of any type (airflowctl sends one); text/plain (airflow.cfg's form) when it is asked for before JSON. */
function answer(req: Request, res: Response, sections: ConfigSection[]): void {
  const type = req.accepts(["application/json", "text/plain"]);
  if (type === false) throw new ApiProblem(406, "Only application/json or text/plain is supported", { field: "accept", location: "header" });
  if (type === "application/json") {
    res.json({ sections });
    return;
  }
  res.type("text/plain").send(sections.map((s) => `[${s.name}]\n${s.options.map((o) => `${o.key} = ${o.value}`).join("\n")}\n`).join("\n"));
}

export function jobConfigRoutes({ runner, exposedConfig }: ApiContext): RouteSpec[] {
  const sections = () => {
    if (!exposedConfig) {
      throw new ApiProblem(403, "Your stand's administrator chose not to expose the configuration (runner.api.expose_config is false): set it to non-sensitive-only in stand.yaml to see it, secrets masked");
    }
    return configSections(exposedConfig());
  };
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/jobs",
      operationId: "get_jobs",
      summary: "Runner processes, as Airflow's jobs",
      description:
        `Each runner process that ever started here, as a ${JOB_TYPE} (a runner schedules, runs tasks and parses). ` +
        "is_alive: beating within the health threshold. job_state: running, success (stopped cleanly), failed (stopped " +
        "beating without a word: killed). Filters on start and end dates, hostname; order_by any field, several, '-' for descending.",
      tag: "Job",
      auth: false,
      query: jobsQuery,
      responses: { 200: { description: "A page of jobs", schema: z.object({ jobs: z.array(jobResponse), total_entries: z.number().int() }), schemaName: "JobCollectionResponse" } },
      async handle({ query, res }) {
        const page = await runner.listJobs({
          alive: query.is_alive,
          startDate: rangeOf(query, "start_date"),
          endDate: rangeOf(query, "end_date"),
          states: query.job_state === undefined ? undefined : [query.job_state],
          jobType: query.job_type,
          hostname: query.hostname,
          matchNone: query.executor_class !== undefined,
          limit: query.limit,
          offset: query.offset,
          orderBy: sortKeys(query.order_by, JOB_SORT_FIELDS),
        });
        res.json({ jobs: page.items.map(serializeJob), total_entries: page.totalEntries });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/config",
      operationId: "get_config",
      summary: "The runner's effective configuration",
      description:
        "stand.yaml after its defaults, by section, every secret-looking option shown as '< hidden >'; 403 unless " +
        "runner.api.expose_config is non-sensitive-only. JSON, or text/plain (airflow.cfg's form) when Accept asks for it before JSON.",
      tag: "Config",
      auth: false, // a read, as every GET here; off unless exposed, and secrets are masked
      query: z.object({ section: text }).strict(),
      responses: { 200: { description: "The configuration", schema: z.object({ sections: z.array(z.object({ name: z.string(), options: z.array(z.object({ key: z.string(), value: z.string() })) })) }), schemaName: "Config" }, 403: { description: "Not exposed" }, 404: { description: "No such section" }, 406: { description: "An Accept neither JSON nor text" } },
      handle({ query, req, res }) {
        const all = sections();
        const chosen = query.section === undefined ? all : all.filter((s) => s.name === query.section);
        if (chosen.length === 0) throw new ApiProblem(404, `section ${query.section ?? ""} not found; the sections are ${all.map((s) => s.name).join(", ")}`, { field: "section" });
        answer(req, res, chosen);
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/config/section/{section}/option/{option}",
      operationId: "get_config_value",
      summary: "One configuration option",
      tag: "Config",
      auth: false, // a read, as every GET here; off unless exposed, and secrets are masked
      params: z.object({ section: z.string().max(250), option: z.string().max(500) }).strict(),
      responses: { 200: { description: "The option", schema: z.object({ sections: z.array(z.unknown()) }), schemaName: "Config" }, 403: { description: "Not exposed" }, 404: { description: "No such option" }, 406: { description: "An Accept neither JSON nor text" } },
      handle({ params, req, res }) {
        const section = sections().find((s) => s.name === params.section);
        const option = section?.options.find((o) => o.key === params.option);
        if (!section || !option) throw new ApiProblem(404, `option [${params.section}] ${params.option} not found`, { field: "option" });
        answer(req, res, [{ name: section.name, options: [option] }]);
      },
    }),
  ];
}
