// `make doctor`: what is wrong with the stand and the world, each with the command that mends it.
// The stand's findings (services down or crash-looping, a degraded loader, the keeper) come from
// src/stand/diagnose.ts; this adds the world's: a position of -1, no world yet, world DAG runs
// running or queued for longer than any healthy one takes. Also the refusal rebuild-storage makes
// before it touches anything when a service cannot serve.
import type { DagRunResponse } from "../api/index.ts";
import { ApiResponseError } from "../cli/index.ts";
import { errorMessage } from "../errors.ts";
import { describeFindings, safeStandFindings, type Finding, standUp } from "../stand/index.ts";
import type { StandContext } from "../services/index.ts";
import { WORLD_DAG_IDS } from "../world/index.ts";
import { apiClient, readWorldPositionText } from "./report.ts";

/** A world run still running after this long is stuck (a step takes minutes; a live day an hour at most). */
const RUN_STUCK_MS = 90 * 60_000;
/** A run queued this long was never picked up. */
const QUEUED_STUCK_MS = 10 * 60_000;

/** The runs of `dagId` that are stuck at `nowMs`: running longer than RUN_STUCK_MS, or queued longer
 * than QUEUED_STUCK_MS (a run with no start or queue time is not judged). */
export function stuckRunFindings(dagId: string, runs: readonly DagRunResponse[], nowMs: number): Finding[] {
  const findings: Finding[] = [];
  for (const run of runs) {
    const since = Date.parse((run.state === "running" ? (run.start_date ?? run.queued_at) : run.queued_at) ?? "");
    const limit = run.state === "running" ? RUN_STUCK_MS : QUEUED_STUCK_MS;
    if (!Number.isFinite(since) || nowMs - since < limit) continue;
    findings.push({
      subject: `${dagId}/${run.dag_run_id}`,
      problem: `${run.state} for ${((nowMs - since) / 60_000).toFixed(0)} min`,
      fix: `read its task log (runner tasks ${dagId} ${run.dag_run_id}); mark it failed in the web view or PATCH its state, then make up`,
      permanent: false,
    });
  }
  return findings;
}

async function worldFindings(): Promise<Finding[]> {
  const client = apiClient();
  const findings: Finding[] = [];
  let position: string | null;
  try {
    position = await readWorldPositionText(client);
  } catch (err) {
    return [{ subject: "runner", problem: `its API does not answer: ${errorMessage(err)}`, fix: "make runner-start (or make up)", permanent: false }];
  }
  if (position === null) findings.push({ subject: "world", problem: "there is no world yet (no world_position)", fix: "make up", permanent: false });
  else if (position === "-1") {
    findings.push({ subject: "world", problem: "world_position is -1: a world DAG failed half way, so the world is not whole", fix: "make rebuild-storage (drops and creates the world again; the played days are lost)", permanent: false });
  }
  for (const dagId of WORLD_DAG_IDS) {
    const runs: DagRunResponse[] = [];
    try {
      for (const state of ["running", "queued"]) {
        const page = await client.request<{ dag_runs: DagRunResponse[] }>("GET", `api/v2/dags/${encodeURIComponent(dagId)}/dagRuns`, { query: { state, limit: 100 } });
        runs.push(...page.dag_runs);
      }
    } catch (err) {
      if (!(err instanceof ApiResponseError && err.status === 404)) throw err;
      // a runner started from older code than this checkout does not know a newer world DAG
      findings.push({ subject: "runner", problem: `it has not loaded the world DAG ${dagId}: it runs older code than this checkout`, fix: "make runner-start (restarts it on changed code)", permanent: false });
      continue;
    }
    findings.push(...stuckRunFindings(dagId, runs, Date.now()));
  }
  return findings;
}

/** Every finding: the stand's, then the world's (the world only when the runner answers). */
export async function doctorFindings(ctx: StandContext): Promise<Finding[]> {
  const stand = await safeStandFindings(ctx);
  const runnerDown = stand.some((f) => f.subject === "runner");
  return [...stand, ...(runnerDown ? [] : await worldFindings())];
}

/**
 * rebuild-storage's preflight: brings the stand up (the keeper's work, done at once), then refuses,
 * naming the service, when one still cannot serve: dropping a database ON CLUSTER with a node down
 * waits for it for minutes and leaves the world half dropped. Returns the refusal, or undefined.
 */
export async function rebuildRefusal(ctx: StandContext): Promise<string | undefined> {
  try {
    await standUp(ctx);
  } catch (err) {
    return `the stand could not be brought up: ${errorMessage(err)}`;
  }
  const blocking = (await safeStandFindings(ctx)).filter((f) => f.subject !== "keeper");
  if (blocking.length === 0) return undefined;
  return describeFindings(blocking, "\n");
}
