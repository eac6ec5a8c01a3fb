// The starter dashboard `make bi` puts in Superset, through Superset's own REST API (the one its
// web UI uses): the stand's ClickHouse as a database (the `reader` account, native protocol, which
// 18.16 speaks), the DM marts' read views as datasets, three charts and a dashboard holding them.
// Idempotent: what exists (by name) is kept, the database's address is brought up to date, the
// dashboard's layout is written again. Every answer is checked against a schema.
import { z } from "zod";
import type { BiConfig, StandConfig } from "../config/index.ts";

export const STARTER_DASHBOARD_SLUG = "stand-starter";
export const STARTER_DATABASE_NAME = "stand ClickHouse (reader)";

/** A SUM over one column, as Superset's explore view writes a simple metric. */
function sum(column: string): Record<string, unknown> {
  return { expressionType: "SIMPLE", column: { column_name: column }, aggregate: "SUM", label: `SUM(${column})` };
}

export interface StarterChart {
  name: string;
  /** A view of the dm database (read merged). */
  table: string;
  vizType: string;
  /** The form's own fields (metrics, axis, grouping). */
  form: Record<string, unknown>;
  /** The one query the chart runs: its columns and metrics (the chart data API reads it). */
  query: { columns: unknown[]; metrics: Record<string, unknown>[] };
}

/** The day column as the x axis, with no time grain: Superset writes a grain as dateTrunc, which 18.16 lacks. */
const dayAxis = { columnType: "BASE_AXIS", sqlExpression: "report_date", label: "report_date", expressionType: "SQL" };
const allDays = [{ clause: "WHERE", subject: "report_date", operator: "TEMPORAL_RANGE", comparator: "No filter", expressionType: "SIMPLE" }];

export const STARTER_CHARTS: StarterChart[] = [
  {
    name: "Revenue per day",
    table: "daily_revenue_v",
    vizType: "echarts_timeseries_line",
    form: { x_axis: "report_date", x_axis_time_format: "%Y-%m-%d", metrics: [sum("revenue")], groupby: [], adhoc_filters: allDays, row_limit: 10000, time_range: "No filter" },
    query: { columns: [dayAxis], metrics: [sum("revenue")] },
  },
  {
    name: "Revenue by category",
    table: "daily_revenue_v",
    vizType: "pie",
    form: { groupby: ["category"], metric: sum("revenue"), adhoc_filters: allDays, row_limit: 100, time_range: "No filter", show_labels: true },
    query: { columns: ["category"], metrics: [sum("revenue")] },
  },
  {
    name: "Visitors and sessions per day",
    table: "daily_traffic_v",
    vizType: "echarts_timeseries_bar",
    form: { x_axis: "report_date", x_axis_time_format: "%Y-%m-%d", metrics: [sum("visitors"), sum("sessions")], groupby: [], adhoc_filters: allDays, row_limit: 10000, time_range: "No filter" },
    query: { columns: [dayAxis], metrics: [sum("visitors"), sum("sessions")] },
  },
];

export function starterDashboardUrl(config: StandConfig, bi: BiConfig): string {
  return `http://${config.bind_host}:${bi.port}/superset/dashboard/${STARTER_DASHBOARD_SLUG}/`;
}

const loginAnswer = z.object({ access_token: z.string().min(1) });
const csrfAnswer = z.object({ result: z.string().min(1) });
const created = z.object({ id: z.number().int() });
const listOf = <T extends z.ZodRawShape>(shape: T) => z.object({ result: z.array(z.object(shape).passthrough()) });
const databases = listOf({ id: z.number().int(), database_name: z.string() });
const datasets = listOf({ id: z.number().int(), table_name: z.string(), schema: z.string().nullable(), database: z.object({ id: z.number().int() }).passthrough() });
const charts = listOf({ id: z.number().int(), slice_name: z.string() });
const dashboards = listOf({ id: z.number().int(), slug: z.string().nullable() });

/** A logged-in session of Superset's REST API: a bearer token, and the CSRF token with its cookie for writes. */
export class SupersetApi {
  private constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly csrf: string,
    private readonly cookie: string,
  ) {}

  static async login(base: string, username: string, password: string): Promise<SupersetApi> {
    const login = await fetch(`${base}/api/v1/security/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username, password, provider: "db", refresh: false }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!login.ok) throw new Error(`superset: login as ${username} at ${base} failed: HTTP ${login.status} ${(await login.text()).slice(0, 200)}`);
    const token = loginAnswer.parse(await login.json()).access_token;
    const csrf = await fetch(`${base}/api/v1/security/csrf_token/`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) });
    if (!csrf.ok) throw new Error(`superset: GET /api/v1/security/csrf_token/ at ${base}: HTTP ${csrf.status}`);
    const cookie = csrf.headers.getSetCookie().map((c) => c.split(";")[0] ?? "").join("; ");
    return new SupersetApi(base, token, csrfAnswer.parse(await csrf.json()).result, cookie);
  }

  /** One call; a non-2xx answer throws with the route and Superset's message. */
  async call<T>(method: string, route: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const response = await fetch(`${this.base}${route}`, {
      method,
      // a JSON content type only with a body: Superset answers 400 to a GET that declares an empty JSON body
      headers: { authorization: `Bearer ${this.token}`, "x-csrftoken": this.csrf, cookie: this.cookie, referer: this.base, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`superset: ${method} ${route}: HTTP ${response.status} ${text.slice(0, 300)}`);
    const parsed = schema.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`superset: ${method} ${route} answered an unexpected shape: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    return parsed.data;
  }
}

/** Every page of a list route is one page here: the starter needs a handful of objects. */
const ALL = "?q=(page_size:100)";

/** The ClickHouse address Superset uses: the first node's native port, as `reader`. */
export function readerUri(config: StandConfig): string {
  const node = config.clickhouse.nodes[0];
  if (!node) throw new Error("the stand config has no ClickHouse node");
  const reader = config.clickhouse.accounts.reader;
  return `clickhouse+native://${encodeURIComponent(reader.user)}:${encodeURIComponent(reader.password)}@${config.bind_host}:${node.tcp_port}/dm`;
}

function layout(chartIds: { id: number; name: string }[]): Record<string, unknown> {
  const rows = [chartIds.slice(0, 2), chartIds.slice(2)].filter((row) => row.length > 0);
  const position: Record<string, unknown> = {
    DASHBOARD_VERSION_KEY: "v2",
    ROOT_ID: { type: "ROOT", id: "ROOT_ID", children: ["GRID_ID"] },
    GRID_ID: { type: "GRID", id: "GRID_ID", children: rows.map((_, i) => `ROW-${i}`), parents: ["ROOT_ID"] },
    HEADER_ID: { id: "HEADER_ID", type: "HEADER", meta: { text: "Clickstream marts (starter)" } },
  };
  rows.forEach((row, i) => {
    position[`ROW-${i}`] = { type: "ROW", id: `ROW-${i}`, children: row.map((c) => `CHART-${c.id}`), parents: ["ROOT_ID", "GRID_ID"], meta: { background: "BACKGROUND_TRANSPARENT" } };
    for (const c of row) {
      position[`CHART-${c.id}`] = { type: "CHART", id: `CHART-${c.id}`, children: [], parents: ["ROOT_ID", "GRID_ID", `ROW-${i}`], meta: { chartId: c.id, width: 6, height: 50, sliceName: c.name } };
    }
  });
  return position;
}

/** Puts the database, datasets, charts and dashboard in place; says whether anything was new. */
export async function ensureStarterDashboard(config: StandConfig, bi: BiConfig): Promise<{ created: boolean; charts: number; dashboardId: number }> {
  const api = await SupersetApi.login(`http://${config.bind_host}:${bi.port}`, bi.admin.username, bi.admin.password);
  let made = false;

  const uri = readerUri(config);
  let databaseId = (await api.call("GET", `/api/v1/database/${ALL}`, databases)).result.find((d) => d.database_name === STARTER_DATABASE_NAME)?.id;
  if (databaseId === undefined) {
    databaseId = (await api.call("POST", "/api/v1/database/", created, { database_name: STARTER_DATABASE_NAME, sqlalchemy_uri: uri, expose_in_sqllab: true })).id;
    made = true;
  } else {
    await api.call("PUT", `/api/v1/database/${databaseId}`, z.unknown(), { sqlalchemy_uri: uri }); // the stand's ports or password may have changed
  }

  const knownDatasets = (await api.call("GET", `/api/v1/dataset/${ALL}`, datasets)).result;
  const datasetIds = new Map<string, number>();
  for (const table of new Set(STARTER_CHARTS.map((c) => c.table))) {
    let id = knownDatasets.find((d) => d.table_name === table && d.schema === "dm" && d.database.id === databaseId)?.id;
    if (id === undefined) {
      id = (await api.call("POST", "/api/v1/dataset/", created, { database: databaseId, schema: "dm", table_name: table })).id;
      made = true;
    }
    datasetIds.set(table, id);
  }

  let dashboardId = (await api.call("GET", `/api/v1/dashboard/${ALL}`, dashboards)).result.find((d) => d.slug === STARTER_DASHBOARD_SLUG)?.id;
  if (dashboardId === undefined) {
    dashboardId = (await api.call("POST", "/api/v1/dashboard/", created, { dashboard_title: "Clickstream marts (starter)", slug: STARTER_DASHBOARD_SLUG, published: true })).id;
    made = true;
  }

  const knownCharts = (await api.call("GET", `/api/v1/chart/${ALL}`, charts)).result;
  const placed: { id: number; name: string }[] = [];
  for (const chart of STARTER_CHARTS) {
    const datasetId = datasetIds.get(chart.table);
    if (datasetId === undefined) throw new Error(`superset: no dataset for dm.${chart.table}`);
    const datasource = `${datasetId}__table`;
    const form = { datasource, viz_type: chart.vizType, ...chart.form };
    const queryContext = {
      datasource: { id: datasetId, type: "table" },
      force: false,
      queries: [{ ...chart.query, orderby: [], row_limit: 10000, filters: [], extras: { having: "", where: "" } }],
      form_data: form,
      result_format: "json",
      result_type: "full",
    };
    const body = { slice_name: chart.name, viz_type: chart.vizType, datasource_id: datasetId, datasource_type: "table", params: JSON.stringify(form), query_context: JSON.stringify(queryContext), dashboards: [dashboardId] };
    let id = knownCharts.find((c) => c.slice_name === chart.name)?.id;
    if (id === undefined) {
      id = (await api.call("POST", "/api/v1/chart/", created, body)).id;
      made = true;
    }
    placed.push({ id, name: chart.name });
  }
  await api.call("PUT", `/api/v1/dashboard/${dashboardId}`, z.unknown(), { position_json: JSON.stringify(layout(placed)), published: true });
  return { created: made, charts: placed.length, dashboardId };
}
