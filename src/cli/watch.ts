// Follows a run to its end for `trigger --wait`: polls the run and its task instances, prints each
// state change as it is seen, and tolerates a short API outage (a restart) before giving up.
import type { DagRunResponse, TaskInstanceResponse } from "../api/index.ts";
import { ApiUnreachableError, EXIT, type RunnerApiClient } from "./client.ts";

export interface WatchOptions {
  pollMs: number;
  /** Give up after this long (exit 3); undefined waits as long as the run takes. */
  timeoutMs?: number;
  /** How long the API may be unreachable while waiting before the CLI gives up. */
  outageToleranceMs: number;
  print: (line: string) => void;
}

const TERMINAL_RUN = new Set(["success", "failed"]);

function clock(date = new Date()): string {
  return date.toISOString().slice(11, 23);
}

function runPath(dagId: string, runId: string): string {
  return `api/v2/dags/${encodeURIComponent(dagId)}/dagRuns/${encodeURIComponent(runId)}`;
}

function describeTask(ti: TaskInstanceResponse, previous: string | undefined): string {
  const change = `${previous ?? "(new)"} -> ${ti.state ?? "none"}`;
  const details = ti.try_number > 0 ? [`try ${ti.try_number}/${ti.max_tries + 1}`] : [];
  if (ti.duration !== null && ti.end_date) details.push(`${ti.duration.toFixed(2)}s`);
  if (ti.child_dag_run_id) details.push(`child ${ti.child_dag_id ?? "?"}/${ti.child_dag_run_id}`);
  if (ti.error && (ti.state === "failed" || ti.state === "up_for_retry")) details.push(`error: ${ti.error}`);
  return `${clock()}  task ${ti.task_id.padEnd(28)} ${change.padEnd(30)} ${details.join(", ")}`.trimEnd();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Returns the exit code: 0 success, 1 failed, 3 still running at the timeout. */
export async function watchRun(client: RunnerApiClient, dagId: string, runId: string, options: WatchOptions): Promise<number> {
  const taskStates = new Map<string, string>();
  // Keyed by state and try, so a retry (failed try 1 -> running try 2) shows even when polls miss
  // the up_for_retry in between.
  const taskKeys = new Map<string, string>();
  let runState: string | undefined;
  const started = Date.now();
  let unreachableSince: number | undefined;

  for (;;) {
    let run: DagRunResponse;
    let tasks: TaskInstanceResponse[];
    try {
      run = await client.request<DagRunResponse>("GET", runPath(dagId, runId));
      tasks = (await client.request<{ task_instances: TaskInstanceResponse[] }>("GET", `${runPath(dagId, runId)}/taskInstances`))
        .task_instances;
      if (unreachableSince !== undefined) options.print(`${clock()}  API reachable again`);
      unreachableSince = undefined;
    } catch (err) {
      if (!(err instanceof ApiUnreachableError)) throw err;
      if (unreachableSince === undefined) {
        unreachableSince = Date.now();
        options.print(`${clock()}  API unreachable (${err.reason}); retrying for ${Math.round(options.outageToleranceMs / 1000)}s`);
      }
      if (Date.now() - unreachableSince > options.outageToleranceMs) throw err;
      await sleep(options.pollMs * 4);
      continue;
    }

    if (run.state !== runState) {
      options.print(`${clock()}  run  ${run.dag_run_id}: ${runState ?? "(new)"} -> ${run.state}`);
      runState = run.state;
    }
    for (const ti of tasks) {
      const key = `${ti.state ?? "none"}#${ti.try_number}`;
      if (taskKeys.get(ti.task_id) !== key) {
        options.print(describeTask(ti, taskStates.get(ti.task_id)));
        taskKeys.set(ti.task_id, key);
        taskStates.set(ti.task_id, ti.state ?? "none");
      }
    }
    if (TERMINAL_RUN.has(run.state)) {
      const took = run.duration === null ? "" : ` in ${run.duration.toFixed(1)}s`;
      options.print(`run ${run.dag_id}/${run.dag_run_id} finished ${run.state}${took}`);
      return run.state === "success" ? EXIT.OK : EXIT.RUN_FAILED;
    }
    if (options.timeoutMs !== undefined && Date.now() - started > options.timeoutMs) {
      options.print(`run ${run.dag_id}/${run.dag_run_id} is still ${run.state} after ${Math.round(options.timeoutMs / 1000)}s; stopped waiting`);
      return EXIT.WAIT_TIMEOUT;
    }
    await sleep(options.pollMs);
  }
}
