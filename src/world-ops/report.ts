// What `make up` and `make rebuild-storage` print after a world DAG: on failure, the task that
// failed and its error, followed down through waiting triggers to the child run that really failed;
// on success, the world summary (position, rows per layer, schema drift) and the web view's address.
import type { DagRunResponse, TaskInstanceResponse, VariableResponse } from "../api/index.ts";
import { ApiResponseError, EXIT, RunnerApiClient, trigger } from "../cli/index.ts";
import { connectClickHouse } from "../clickhouse/index.ts";
import { apiBaseUrl, loadStandConfig } from "../config/index.ts";
import { APPLICATION_DATABASES, type SchemaStatus, WORLD_POSITION_KEY } from "../world/index.ts";
import { coerceError } from "../errors.ts";

export interface FailedTask {
  dagId: string;
  runId: string;
  taskId: string;
  error: string;
}

const enc = encodeURIComponent;

async function taskInstances(client: RunnerApiClient, dagId: string, runId: string): Promise<TaskInstanceResponse[]> {
  const page = await client.request<{ task_instances: TaskInstanceResponse[] }>("GET", `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}/taskInstances`);
  return page.task_instances;
}

/** The chain of failed tasks from this run down to the deepest failed child run (waiting triggers). */
export async function failureChain(client: RunnerApiClient, dagId: string, runId: string): Promise<FailedTask[]> {
  const chain: FailedTask[] = [];
  let at: { dagId: string; runId: string } | undefined = { dagId, runId };
  for (let depth = 0; at && depth < 8; depth++) {
    const failed: TaskInstanceResponse | undefined = (await taskInstances(client, at.dagId, at.runId)).find((ti) => ti.state === "failed");
    if (!failed) break;
    chain.push({ dagId: at.dagId, runId: at.runId, taskId: failed.task_id, error: failed.error ?? "(no error recorded)" });
    at = failed.child_dag_id && failed.child_dag_run_id ? { dagId: failed.child_dag_id, runId: failed.child_dag_run_id } : undefined;
  }
  return chain;
}

/** A loud block naming the failed task(s) and the root error, and where to read the full log. */
export function renderFailure(dagId: string, runId: string, chain: readonly FailedTask[]): string {
  const bar = "!".repeat(100);
  const lines = [bar, `!! ${dagId} run ${runId} FAILED`];
  for (const step of chain) lines.push(`!!   ${step.dagId}/${step.runId}: task ${step.taskId} failed`);
  const root = chain.at(-1);
  if (root) {
    lines.push("!!", ...root.error.split("\n").map((line) => `!! ${line}`), "!!");
    lines.push(`!! full log: node --import tsx src/cli/main.ts logs ${root.dagId} ${root.runId} ${root.taskId}`);
  } else {
    lines.push("!! no failed task found (was the run failed by the runner itself?); see the web view");
  }
  lines.push(`!! web view: ${webViewUrl()}/dags/${enc(dagId)}/runs/${enc(runId)}`, bar);
  return lines.join("\n");
}

export function webViewUrl(): string {
  return `${apiBaseUrl()}/ui`;
}

export async function readWorldPositionText(client: RunnerApiClient): Promise<string | null> {
  try {
    return (await client.request<VariableResponse>("GET", `api/v2/variables/${WORLD_POSITION_KEY}`)).value;
  } catch (err) {
    if (err instanceof ApiResponseError && err.status === 404) return null;
    throw err;
  }
}

/** Databases in the order data flows through them. */
const LAYER_ORDER = ["stg", "ods", "dds", "dm", "dic"];

export interface LayerCount {
  database: string;
  tables: number;
  rows: number;
}

/** Rows per application database, summed over both nodes (each holds its own shard). */
export async function layerCounts(): Promise<LayerCount[]> {
  const config = loadStandConfig();
  const list = APPLICATION_DATABASES.map((d) => `'${d}'`).join(", ");
  const totals = new Map<string, LayerCount>(APPLICATION_DATABASES.map((d) => [d, { database: d, tables: 0, rows: 0 }]));
  for (const node of config.clickhouse.nodes) {
    const clickhouse = connectClickHouse({ node: node.name, account: "reader", config, requestTimeoutMs: 10_000 });
    try {
      const rows = await clickhouse.query<{ database: string; tables: string; rows: string }>(
        `SELECT database, uniqExact(table) AS tables, sum(rows) AS rows FROM system.parts
          WHERE active AND database IN (${list}) GROUP BY database`,
      );
      for (const r of rows) {
        const t = totals.get(r.database);
        if (!t) continue;
        t.rows += Number(r.rows);
        t.tables = Math.max(t.tables, Number(r.tables));
      }
    } finally {
      await clickhouse.close();
    }
  }
  return [...totals.values()];
}

function renderDrift(schema: SchemaStatus): string {
  const c = schema.catalogue;
  const looked = `catalogue checked on ${c.nodes_checked.join(", ") || "no node"}` +
    (Object.keys(c.unreachable).length > 0 ? `, NOT on ${Object.keys(c.unreachable).join(", ")} (unreachable)` : "");
  if (!schema.drift) return `schema: ${schema.status === "no_build" ? "no world build recorded" : `in sync with sql/ddl/ (${looked})`}`;
  if (c.missing.length > 0) return `schema: DRIFT — ${schema.note}`;
  const files = schema.files.filter((f) => f.drift !== null).map((f) => `${f.file} (${f.drift})`);
  return `schema: DRIFT — ${files.join(", ")}; make up does not apply changed DDL (make rebuild-storage does) (${looked})`;
}

/** The summary printed after a green world DAG. Layer counts are best effort: ClickHouse trouble is shown, not thrown. */
export async function renderWorldSummary(client: RunnerApiClient): Promise<string> {
  const [position, schema, layers] = await Promise.all([
    readWorldPositionText(client),
    client.request<SchemaStatus>("GET", "api/v2/system/schema").catch((err: unknown) => coerceError(err)),
    layerCounts().catch((err: unknown) => coerceError(err)),
  ]);
  const lines = [`world: ${WORLD_POSITION_KEY} = ${position ?? "(not set)"}`];
  if (layers instanceof Error) lines.push(`layers: could not count (${layers.message})`);
  else {
    const inLayerOrder = LAYER_ORDER.map((db) => layers.find((l) => l.database === db)).filter((l) => l !== undefined);
    lines.push(`layers: ${inLayerOrder.map((l) => `${l.database} ${l.rows} rows/${l.tables} tables`).join(" · ")}`);
    const ods = layers.find((l) => l.database === "ods");
    // the position is the world's only state, so a world dropped behind the DAGs' back still reads as ready
    if (Number(position) > 0 && ods?.rows === 0) {
      lines.push(`WARNING: ${WORLD_POSITION_KEY} is ${position} but ODS holds no rows: the world was dropped outside world_recreate; run make rebuild-storage`);
    }
  }
  lines.push(schema instanceof Error ? `schema: status unavailable (${schema.message})` : renderDrift(schema));
  lines.push(`web view: ${webViewUrl()}`);
  return lines.join("\n");
}

export async function getRun(client: RunnerApiClient, dagId: string, runId: string): Promise<DagRunResponse> {
  return client.request<DagRunResponse>("GET", `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}`);
}

export function apiClient(): RunnerApiClient {
  return new RunnerApiClient(apiBaseUrl(), loadStandConfig().runner.api_token);
}

/**
 * Triggers a world DAG through the REST API exactly as `runner trigger <dag> --wait` does, follows
 * it, and on a red run prints the failure block (to stderr). The run id names its purpose.
 */
export async function runWorldDag(dagId: string, purpose: string, print: (line: string) => void, conf?: Record<string, unknown>): Promise<boolean> {
  const client = apiClient();
  const runId = `${purpose}__${new Date().toISOString()}`;
  const started = Date.now();
  const note = `make ${purpose.split("__")[0]?.replace(/_/g, "-") ?? purpose}`;
  const code = await trigger({ client, json: false, print }, dagId, { wait: true, runId, note, ...(conf ? { conf: JSON.stringify(conf) } : {}) });
  if (code === EXIT.OK) {
    print(`${dagId}: success in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return true;
  }
  console.error(renderFailure(dagId, runId, await failureChain(client, dagId, runId)));
  return false;
}
