// The CLI's commands over the REST API. Each returns an exit code; errors are thrown as CliError.
import type {
  DagResponse,
  DagRunResponse,
  TaskInstanceResponse,
  VariableChangeResponse,
  VariableResponse,
} from "../api/index.ts";
import { ApiResponseError, CliError, EXIT, type RunnerApiClient } from "./client.ts";
import { seconds, table } from "./format.ts";
import { watchRun } from "./watch.ts";
import { errorMessage } from "../errors.ts";

export interface CommandContext {
  client: RunnerApiClient;
  json: boolean;
  print: (line: string) => void;
}

const enc = encodeURIComponent;

function show(ctx: CommandContext, value: unknown, text: () => string): number {
  ctx.print(ctx.json ? JSON.stringify(value, null, 2) : text());
  return EXIT.OK;
}

export function parseConf(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let conf: unknown;
  try {
    conf = JSON.parse(text);
  } catch (err) {
    throw new CliError(`--conf is not valid JSON: ${errorMessage(err)}`);
  }
  if (conf === null || typeof conf !== "object" || Array.isArray(conf)) throw new CliError("--conf must be a JSON object, e.g. '{\"days\": 3}'");
  return conf as Record<string, unknown>;
}

export interface TriggerOptions {
  conf?: string;
  runId?: string;
  logicalDate?: string;
  note?: string;
  wait?: boolean;
  timeout?: string;
  pollMs?: string;
}

function positiveNumber(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new CliError(`${flag} must be a positive number, got '${text}'`);
  return value;
}

export async function trigger(ctx: CommandContext, dagId: string, options: TriggerOptions): Promise<number> {
  const conf = parseConf(options.conf);
  const timeoutSeconds = positiveNumber(options.timeout, "--timeout");
  const pollMs = positiveNumber(options.pollMs, "--poll-ms") ?? 250;
  const run = await ctx.client.request<DagRunResponse>("POST", `api/v2/dags/${enc(dagId)}/dagRuns`, {
    body: {
      logical_date: options.logicalDate ?? null,
      ...(options.runId ? { dag_run_id: options.runId } : {}),
      ...(conf ? { conf } : {}),
      ...(options.note ? { note: options.note } : {}),
    },
  });
  if (!options.wait) return show(ctx, run, () => `triggered ${run.dag_id}/${run.dag_run_id} (${run.state})`);
  ctx.print(`triggered ${run.dag_id}/${run.dag_run_id}; waiting for it to finish`);
  return watchRun(ctx.client, run.dag_id, run.dag_run_id, {
    pollMs,
    timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
    outageToleranceMs: 30_000,
    print: ctx.print,
  });
}

export async function listDags(ctx: CommandContext): Promise<number> {
  const page = await ctx.client.request<{ dags: DagResponse[]; total_entries: number }>("GET", "api/v2/dags", { query: { limit: 1000 } });
  return show(ctx, page, () =>
    table(
      ["dag_id", "paused", "schedule", "max_active_runs", "tasks"],
      page.dags.map((d) => [d.dag_id, d.is_paused ? "yes" : "no", d.timetable_summary ?? "none", d.max_active_runs, d.task_ids.length]),
    ),
  );
}

export async function listRuns(ctx: CommandContext, dagId: string, options: { limit?: string; state?: string }): Promise<number> {
  const page = await ctx.client.request<{ dag_runs: DagRunResponse[]; total_entries: number }>("GET", `api/v2/dags/${enc(dagId)}/dagRuns`, {
    query: { limit: options.limit ?? 20, state: options.state },
  });
  return show(ctx, page, () =>
    [
      table(
        ["dag_run_id", "state", "run_type", "queued_at", "duration", "parent", "waiting_for"],
        page.dag_runs.map((r) => [
          r.dag_run_id,
          r.state,
          r.run_type,
          r.queued_at,
          seconds(r.duration),
          r.parent_dag_run_id ? `${r.parent_dag_id ?? "?"}/${r.parent_dag_run_id}` : null,
          r.waiting_for,
        ]),
      ),
      `${page.dag_runs.length} of ${page.total_entries} runs`,
    ].join("\n"),
  );
}

export async function listTasks(ctx: CommandContext, dagId: string, runId: string): Promise<number> {
  const page = await ctx.client.request<{ task_instances: TaskInstanceResponse[] }>(
    "GET",
    `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}/taskInstances`,
  );
  return show(ctx, page, () =>
    table(
      ["task_id", "state", "try", "duration", "hostname", "child run", "error"],
      page.task_instances.map((t) => [
        t.task_id,
        t.state,
        `${t.try_number}/${t.max_tries + 1}`,
        seconds(t.duration),
        t.hostname,
        t.child_dag_run_id ? `${t.child_dag_id ?? "?"}/${t.child_dag_run_id}` : null,
        t.error,
      ]),
    ),
  );
}

export async function showLogs(ctx: CommandContext, dagId: string, runId: string, taskId: string, options: { try?: string }): Promise<number> {
  let tryNumber = options.try === undefined ? undefined : Number(options.try);
  if (tryNumber !== undefined && (!Number.isInteger(tryNumber) || tryNumber < 1)) throw new CliError(`--try must be a whole number from 1, got '${options.try}'`);
  const runPath = `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}`;
  if (tryNumber === undefined) {
    const page = await ctx.client.request<{ task_instances: TaskInstanceResponse[] }>("GET", `${runPath}/taskInstances`);
    const ti = page.task_instances.find((t) => t.task_id === taskId);
    if (!ti) throw new CliError(`run ${dagId}/${runId} has no task '${taskId}' (tasks: ${page.task_instances.map((t) => t.task_id).join(", ")})`);
    if (ti.try_number < 1) throw new CliError(`task '${taskId}' has not started yet (state ${ti.state ?? "none"}); no log to show`);
    tryNumber = ti.try_number;
  }
  const path = `${runPath}/taskInstances/${enc(taskId)}/logs/${tryNumber}`;
  if (ctx.json) return show(ctx, await ctx.client.request<unknown>("GET", path), () => "");
  const text = await ctx.client.request<string>("GET", path, { accept: "text/plain" });
  ctx.print(text.replace(/\n$/, ""));
  return EXIT.OK;
}

/** `runner mark <dag> <run> failed|success`: PATCH the run's state (Airflow's body). */
export async function markRun(ctx: CommandContext, dagId: string, runId: string, state: string): Promise<number> {
  if (state !== "failed" && state !== "success") throw new CliError(`a run can be marked failed or success, not '${state}'`);
  const run = await ctx.client.request<DagRunResponse>("PATCH", `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}`, { body: { state } });
  return show(ctx, run, () => `${dagId}/${run.dag_run_id} is ${run.state}`);
}

export interface ClearOptions {
  task?: string[];
  all?: boolean;
  downstream?: boolean;
  upstream?: boolean;
  dryRun?: boolean;
  latestVersion?: boolean;
}

/** `runner clear <dag> <run>`: the failed tasks (or --task …, or --all) run again in the same run. */
export async function clearTasks(ctx: CommandContext, dagId: string, runId: string, options: ClearOptions): Promise<number> {
  const body = {
    dag_run_id: runId,
    dry_run: options.dryRun === true,
    task_ids: options.task && options.task.length > 0 ? options.task : null,
    only_failed: options.all !== true,
    include_downstream: options.downstream !== false,
    include_upstream: options.upstream === true,
    run_on_latest_version: options.latestVersion === true,
  };
  const page = await ctx.client.request<{ task_instances: TaskInstanceResponse[] }>("POST", `api/v2/dags/${enc(dagId)}/clearTaskInstances`, { body });
  const ids = page.task_instances.map((t) => t.task_id);
  return show(ctx, page, () =>
    ids.length === 0
      ? `nothing to clear in ${dagId}/${runId} (no ${options.all === true ? "" : "failed "}task matches; running ones are never cleared)`
      : `${options.dryRun === true ? "would clear" : "cleared"} ${ids.length}: ${ids.join(", ")}`,
  );
}

export async function setPaused(ctx: CommandContext, dagId: string, paused: boolean): Promise<number> {
  const dag = await ctx.client.request<DagResponse>("PATCH", `api/v2/dags/${enc(dagId)}`, { body: { is_paused: paused } });
  return show(ctx, dag, () => `${dag.dag_id} is ${dag.is_paused ? "paused" : "unpaused"}`);
}

export async function getVariable(ctx: CommandContext, key: string): Promise<number> {
  const variable = await ctx.client.request<VariableResponse>("GET", `api/v2/variables/${enc(key)}`);
  return show(ctx, variable, () => variable.value);
}

export async function listVariables(ctx: CommandContext): Promise<number> {
  const page = await ctx.client.request<{ variables: VariableResponse[] }>("GET", "api/v2/variables", { query: { limit: 1000 } });
  return show(ctx, page, () =>
    table(["key", "value", "updated_at", "description"], page.variables.map((v) => [v.key, v.value, v.updated_at, v.description])),
  );
}

export async function setVariable(ctx: CommandContext, key: string, value: string, options: { description?: string }): Promise<number> {
  const body = { value, ...(options.description === undefined ? {} : { description: options.description }) };
  let variable: VariableResponse;
  try {
    variable = await ctx.client.request<VariableResponse>("PATCH", `api/v2/variables/${enc(key)}`, { body });
  } catch (err) {
    if (!(err instanceof ApiResponseError && err.status === 404)) throw err;
    variable = await ctx.client.request<VariableResponse>("POST", "api/v2/variables", { body: { key, ...body } });
  }
  return show(ctx, variable, () => `${variable.key} = ${variable.value}`);
}

export async function deleteVariable(ctx: CommandContext, key: string): Promise<number> {
  await ctx.client.request<undefined>("DELETE", `api/v2/variables/${enc(key)}`);
  return show(ctx, { deleted: key }, () => `deleted ${key}`);
}

export async function variableHistory(ctx: CommandContext, key: string): Promise<number> {
  const history = await ctx.client.request<{ changes: VariableChangeResponse[] }>("GET", `api/v2/variables/${enc(key)}/history`);
  return show(ctx, history, () =>
    table(
      ["changed_at", "old_value", "new_value", "changed_by", "run"],
      history.changes.map((c) => [c.changed_at, c.old_value, c.new_value, c.changed_by, c.dag_run_id ? `${c.dag_id ?? "?"}/${c.dag_run_id}` : null]),
    ),
  );
}

export async function showHealth(ctx: CommandContext): Promise<number> {
  const health = await ctx.client.request<{ metadatabase: { status: string }; scheduler: { status: string; latest_scheduler_heartbeat: string | null } }>(
    "GET",
    "api/v2/monitor/health",
  );
  const healthy = health.metadatabase.status === "healthy" && health.scheduler.status === "healthy";
  show(ctx, health, () =>
    `metadatabase: ${health.metadatabase.status}\nscheduler: ${health.scheduler.status} (last heartbeat ${health.scheduler.latest_scheduler_heartbeat ?? "never"})`,
  );
  return healthy ? EXIT.OK : EXIT.RUN_FAILED;
}
