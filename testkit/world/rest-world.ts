// The shared world driven through the stand's own runner service over REST, and observed in
// ClickHouse, Kafka and the runner database: the plumbing of the lifecycle tests.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import type { DagRunResponse, LogResponse, TaskInstanceResponse, VariableChangeResponse } from "../../src/api/index.ts";
import { ApiResponseError, RunnerApiClient } from "../../src/cli/index.ts";
import { connectClickHouse, type StandClickHouse } from "../../src/clickhouse/index.ts";
import type pg from "pg";
import { apiBaseUrl, launchArgs, loadStandConfig, repoRoot } from "../../src/config/index.ts";
import { ensureRunner, runnerPid, stopRunner } from "../../src/services/index.ts";
import { standContext } from "../../src/stand/index.ts";
import { withRunnerDb as withLedgerDb, WORLD_POSITION_KEY } from "../../src/world/index.ts";
import { deleteConsumerGroups, dropApplicationDatabases, withKafkaAdmin, deleteTopics } from "../../tasks/index.ts";
import { setTestIngest } from "./ingest.ts";

const enc = encodeURIComponent;
const quiet = () => undefined;

export const api = new RunnerApiClient(apiBaseUrl(), loadStandConfig().runner.api_token, 120_000);

/**
 * Starts the runner service when needed (restarted when the code changed); returns a function that
 * stops it again if we started it. Lifecycle tests use the stand's own runner, not a private one,
 * because the world and world_position belong to it: a private runner would see another position.
 */
export async function useRunnerService(): Promise<() => Promise<void>> {
  const ctx = standContext(quiet);
  const wasRunning = runnerPid(ctx) !== undefined;
  await ensureRunner(ctx);
  return async () => {
    if (!wasRunning) await stopRunner(ctx);
  };
}

export interface FinishedRun {
  run: DagRunResponse;
  tasks: Map<string, TaskInstanceResponse>;
  seconds: number;
}

export async function triggerRun(dagId: string, conf: Record<string, unknown> = {}): Promise<DagRunResponse> {
  return api.request<DagRunResponse>("POST", `api/v2/dags/${enc(dagId)}/dagRuns`, { body: { conf, note: "test/lifecycle" } });
}

export async function taskInstances(dagId: string, runId: string): Promise<Map<string, TaskInstanceResponse>> {
  const page = await api.request<{ task_instances: TaskInstanceResponse[] }>("GET", `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}/taskInstances`);
  return new Map(page.task_instances.map((ti) => [ti.task_id, ti]));
}

export async function waitForRun(dagId: string, runId: string, timeoutSeconds = 600): Promise<DagRunResponse> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (;;) {
    const left = Math.max(1, Math.min(300, Math.ceil((deadline - Date.now()) / 1000)));
    const run = await api.request<DagRunResponse>("GET", `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}/wait`, {
      query: { timeout: left },
      timeoutMs: (left + 30) * 1000,
    });
    if (run.state === "success" || run.state === "failed") return run;
    if (Date.now() >= deadline) throw new Error(`${dagId}/${runId} still ${run.state} after ${timeoutSeconds} s`);
  }
}

export async function runDag(dagId: string, conf: Record<string, unknown> = {}, timeoutSeconds = 600): Promise<FinishedRun> {
  const started = Date.now();
  const triggered = await triggerRun(dagId, conf);
  const run = await waitForRun(dagId, triggered.dag_run_id, timeoutSeconds);
  return { run, tasks: await taskInstances(dagId, run.dag_run_id), seconds: (Date.now() - started) / 1000 };
}

export function stateOf(finished: FinishedRun, taskId: string): string | null {
  const ti = finished.tasks.get(taskId);
  assert.ok(ti, `${finished.run.dag_id} has no task ${taskId}`);
  return ti.state;
}

export async function taskLog(dagId: string, runId: string, taskId: string, tryNumber = 1): Promise<string> {
  const log = await api.request<LogResponse>("GET", `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}/taskInstances/${enc(taskId)}/logs/${tryNumber}`);
  return log.content.map((l) => l.event).join("\n");
}

/** A compact view of a run for assertion messages. */
export function describeRun(finished: FinishedRun): string {
  const tasks = [...finished.tasks.values()].map((ti) => `${ti.task_id}=${ti.state}${ti.error ? ` (${ti.error.slice(0, 300)})` : ""}`);
  return `${finished.run.dag_id}/${finished.run.dag_run_id} ${finished.run.state}: ${tasks.join("; ")}`;
}

// ---- world_position ---------------------------------------------------------------------------

export async function readPositionText(): Promise<string | null> {
  try {
    return (await api.request<{ value: string }>("GET", `api/v2/variables/${WORLD_POSITION_KEY}`)).value;
  } catch (err) {
    if (err instanceof ApiResponseError && err.status === 404) return null;
    throw err;
  }
}

/** Sets (or, with null, deletes) the position as a test: a hand edit, recorded as such in the history. */
export async function setPositionText(value: string | null): Promise<void> {
  if (value === null) {
    if ((await readPositionText()) !== null) await api.request("DELETE", `api/v2/variables/${WORLD_POSITION_KEY}`);
    return;
  }
  await api.request("POST", "api/v2/variables", { body: { key: WORLD_POSITION_KEY, value } }).catch(async (err: unknown) => {
    if (!(err instanceof ApiResponseError) || err.status !== 409) throw err;
    await api.request("PATCH", `api/v2/variables/${WORLD_POSITION_KEY}`, { body: { value } });
  });
}

export async function positionHistory(): Promise<VariableChangeResponse[]> {
  try {
    return (await api.request<{ changes: VariableChangeResponse[] }>("GET", `api/v2/variables/${WORLD_POSITION_KEY}/history`)).changes;
  } catch (err) {
    if (err instanceof ApiResponseError && err.status === 404) return [];
    throw err;
  }
}

// ---- ClickHouse and Kafka observations ----------------------------------------------------------

export async function withClickHouse<T>(work: (ch: StandClickHouse) => Promise<T>): Promise<T> {
  const clickhouse = connectClickHouse({ account: "admin", requestTimeoutMs: 60_000 });
  try {
    return await work(clickhouse);
  } finally {
    await clickhouse.close();
  }
}

export async function scalar(sql: string): Promise<number> {
  return withClickHouse(async (ch) => {
    const rows = await ch.query<{ n: string | number }>(sql);
    return Number(rows[0]?.n ?? 0);
  });
}

export async function applicationDatabases(): Promise<string[]> {
  return withClickHouse(async (ch) =>
    (await ch.query<{ name: string }>("SELECT name FROM system.databases WHERE name IN ('stg','ods','dds','dm','dic') ORDER BY name")).map((r) => r.name),
  );
}

/** ODS events per date (after dedup, FINAL) and the error rows: what the passport promises. */
export async function odsByDate(): Promise<{ byDate: Record<string, number>; uniqueWatchIds: number; errors: number }> {
  return withClickHouse(async (ch) => {
    const rows = await ch.query<{ d: string; n: string }>("SELECT toString(EventDate) AS d, count() AS n FROM ods.event_dist FINAL GROUP BY d ORDER BY d");
    const unique = await ch.query<{ n: string }>("SELECT uniqExact(WatchID) AS n FROM ods.event_dist");
    const errors = await ch.query<{ n: string }>("SELECT count() AS n FROM ods.event_errors_dist FINAL");
    return {
      byDate: Object.fromEntries(rows.map((r) => [r.d, Number(r.n)])),
      uniqueWatchIds: Number(unique[0]?.n ?? 0),
      errors: Number(errors[0]?.n ?? 0),
    };
  });
}

/** The topic's id as the broker wrote it into its partition directory (Kafka keeps it in partition.metadata). */
export function topicId(topic: string): string | undefined {
  const file = path.join(standContext(quiet).paths.kafka.data, `${topic}-0`, "partition.metadata");
  if (!existsSync(file)) return undefined;
  return /topic_id:\s*(\S+)/.exec(readFileSync(file, "utf8"))?.[1];
}

export interface GroupOffsets {
  committed: number;
  end: number;
}

/** Sum over partitions of the group's committed offsets and of the topic's end offsets. */
export async function groupOffsets(groupId: string, topic: string): Promise<GroupOffsets> {
  return withKafkaAdmin({}, "lifecycle-test-offsets", async (admin) => {
    const ends = await admin.fetchTopicOffsets(topic);
    const [group] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const committed = (group?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    return { committed, end: ends.reduce((sum, p) => sum + Number(p.high), 0) };
  });
}

/** No world at all: the loader stopped, no databases, consumer groups, topics or position (the task library, as world_recreate uses it). */
export async function emptyWorld(): Promise<void> {
  const io = { signal: new AbortController().signal, log: quiet };
  await setTestIngest(io, "stopped", "test emptyWorld");
  await dropApplicationDatabases(io);
  await deleteConsumerGroups(io);
  await deleteTopics(io);
  await setPositionText(null);
}

// ---- make targets (src/world-ops/cli.ts, what the Makefile calls) ------------------------------------

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** Runs `node scripts/launch.mjs src/world-ops/cli.ts <args>` as make would, capturing its output. */
export function runUpCommand(args: readonly string[], timeoutMs = 300_000): Promise<CommandResult> {
  const started = Date.now();
  const child = spawn(process.execPath, launchArgs(path.join(repoRoot, "src", "world-ops", "cli.ts"), ...args), {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr, seconds: (Date.now() - started) / 1000 });
    });
  });
}

/** The newest run of a DAG whose id starts with `prefix` (make's runs are named make_up__…, rebuild_storage__…). */
export async function latestRun(dagId: string, prefix: string): Promise<DagRunResponse> {
  const page = await api.request<{ dag_runs: DagRunResponse[] }>("GET", `api/v2/dags/${enc(dagId)}/dagRuns`, { query: { limit: 20 } });
  const run = page.dag_runs.find((r) => r.dag_run_id.startsWith(prefix));
  assert.ok(run, `no ${dagId} run named ${prefix}…`);
  return run;
}

// ---- the schema ledger, read and (for the drift check) written directly --------------------------

export function withRunnerDb<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  return withLedgerDb(work, "test-rest-world");
}

export async function ledgerRowCount(): Promise<number> {
  return withRunnerDb(async (c) => Number((await c.query<{ n: string }>("select count(*) as n from world.schema_ledger")).rows[0]?.n ?? 0));
}
