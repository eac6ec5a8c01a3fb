// Two runners on one metadata database, as two hosts would run them (docs/deploy.md): the test
// stand's runner and a second host's (testkit/stand/second-host.ts: its own state directory and API port,
// the test stand's Postgres). A run triggered on one is seen and marked on the other; kill -9 of the
// runner whose worker holds a task: the other takes the task over once the lease ends and the run
// ends green (the task's lost try spends its one retry), and the keeper starts the killed runner again;
// a runner SIGSTOPped past its lease and resumed has its late result refused and logged. Each moment
// is staged by a runner pause point (runner.pause_points, read by every runner of the pool), never by
// a timing window. Then a world step's task: its holder killed, the second host's runner plays the
// rest of the step, and the day is in ODS exactly once.
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { DagRunResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import pg from "pg";
import { apiBaseUrl, postgresUrl } from "../../src/config/stand.ts";
import { RunnerApiClient } from "../../src/cli/client.ts";
import { ensureKeeper, readKeeperView, stopKeeper } from "../../src/keeper/keeper-service.ts";
import { nodeServicePaths } from "../../src/services/node-service.ts";
import { ensureRunner, runnerHealthy, runnerPid, stopRunner } from "../../src/services/runner-service.ts";
import { standContext } from "../../src/stand/stand.ts";
import { secondHostContext } from "../../testkit/stand/second-host.ts";
import { api, readPositionText, scalar, waitForRun } from "../../testkit/world/rest-world.ts";
import { expectedDay } from "../../testkit/world/loader-day.ts";
import { armRunnerPauses, pauseReached, releaseAllPauses, releasePause } from "../../testkit/runner/runner-pauses.ts";
import { sampledTests, sampleMatrix } from "../../testkit/matrix.ts";
import { SECOND_HOST_FAULTS } from "../../testkit/matrices.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";

const quiet = (): undefined => undefined;
const ctx = standContext(quiet);
const host2 = secondHostContext(quiet);
const api2 = new RunnerApiClient(apiBaseUrl(host2.config), host2.config.runner.api_token, 120_000);
const DAG = "example_hello";

const runPath = (runId: string): string => `api/v2/dags/${DAG}/dagRuns/${encodeURIComponent(runId)}`;

async function tasksOn(client: RunnerApiClient, runId: string): Promise<Map<string, TaskInstanceResponse>> {
  const page = await client.request<{ task_instances: TaskInstanceResponse[] }>("GET", `${runPath(runId)}/taskInstances`);
  return new Map(page.task_instances.map((ti) => [ti.task_id, ti]));
}

/** One row of the runner's metadata, read on the test stand's runner database. */
async function runnerRow<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T | undefined> {
  const client = new pg.Client({ connectionString: postgresUrl(ctx.config.postgres.runner_database, ctx.config) });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows[0];
  } finally {
    await client.end();
  }
}

const TASK_OF_RUN = "from runner.task_instances ti join runner.dag_runs r on r.id = ti.run_pk where r.run_id = $1 and ti.task_id = $2";

/** kill -9 of the runner that holds runId's task; answers the lease it last renewed (every lease/3,
 * so it ends 2/3 to 3/3 of a lease after the kill): the moment a takeover may start from. */
async function killHolder(pid: number, runId: string, taskId: string): Promise<Date> {
  process.kill(pid, "SIGKILL");
  const row = await runnerRow<{ lease_expires_at: Date | null }>(`select ti.lease_expires_at ${TASK_OF_RUN}`, [runId, taskId]);
  const leaseEnd = row?.lease_expires_at ?? undefined;
  assert.ok(leaseEnd !== undefined, `${taskId}'s try holds a lease when its runner is killed`);
  return leaseEnd;
}

/** The takeover's try (the second) started after the lease its dead holder last renewed, not before. */
async function assertTakenOverAfterLease(runId: string, taskId: string, leaseEnd: Date | undefined): Promise<void> {
  const second = await runnerRow<{ start_date: Date }>(`select tt.start_date from runner.task_tries tt where tt.try_number = 2 and tt.ti_id = (select ti.id ${TASK_OF_RUN})`, [runId, taskId]);
  assert.ok(second !== undefined && leaseEnd !== undefined, `${taskId} has a second try and its first a lease`);
  assert.ok(second.start_date >= leaseEnd, `${taskId} taken over after the lease ended (${leaseEnd.toISOString()}), not before: the second try started ${second.start_date.toISOString()}`);
}

describe("a pool of two runners: the test stand's and a second host's (test stand)", () => {
  // each takeover fault is a point of second-host.fault: make test runs the ones the seed draws, make test-full all
  const faults = sampledTests(sampleMatrix(SECOND_HOST_FAULTS), it);
  const faultTest = faults.test;
  useWorldSuite({
    wholeWorld: true, // the last test steps the world
    setUp: async () => {
      await releaseAllPauses();
    },
    tearDown: async () => {
      await releaseAllPauses();
      await stopRunner(host2);
      await stopKeeper(ctx); // the test stand's keeper runs only where a test starts it
    },
  });

  before(async () => {
    await ensureRunner(host2);
  });

  it("a run triggered on one runner is seen on the other, marked there, and cleared there", async () => {
    const [pause] = await armRunnerPauses([{ dag: DAG, task: "greet", phase: "before" }], "pool: seen on the other");
    assert.ok(pause !== undefined);
    const triggered = await api.request<DagRunResponse>("POST", `api/v2/dags/${DAG}/dagRuns`, { body: { conf: { name: "pool" } } });
    try {
      await pauseReached(pause); // a try of greet is held: the run is running
      const seen = await api2.request<DagRunResponse>("GET", runPath(triggered.dag_run_id));
      assert.equal(seen.state, "running", "the second host sees the run the first triggered");
      assert.equal((seen.conf as { name?: unknown } | null)?.name, "pool");
      const marked = await api2.request<DagRunResponse>("PATCH", runPath(triggered.dag_run_id), { body: { state: "failed" } });
      assert.equal(marked.state, "failed");
      assert.equal((await api.request<DagRunResponse>("GET", runPath(triggered.dag_run_id))).state, "failed", "the first host sees the mark the second made");
    } finally {
      await releasePause(pause); // whatever happened: a held run would hold the next (max_active_runs 1)
    }
    const ended = await waitForRun(DAG, triggered.dag_run_id, 120);
    assert.equal(ended.state, "failed", "the held try's late result does not undo the mark");
    // and cleared on the second host: the run is played again, and the first host sees it end green
    await api2.request("POST", `api/v2/dags/${DAG}/clearTaskInstances`, { body: { dry_run: false, dag_run_id: triggered.dag_run_id, only_failed: false } });
    const again = await waitForRun(DAG, triggered.dag_run_id, 120);
    assert.equal(again.state, "success", "cleared on the second host, the run ran again; the first host sees it green");
  });

  faultTest("kill-holder", "kill -9 of the runner holding a task: the other takes it over after the lease, the run ends green, and the keeper starts the killed one again", async () => {
    await stopRunner(host2); // so the test stand's runner takes the task (by construction, not by luck)
    // farewell has a retry: the try the dead runner held is lost, the takeover's is its second
    const [pause] = await armRunnerPauses([{ dag: DAG, task: "farewell", phase: "before" }], "pool: kill the holder");
    assert.ok(pause !== undefined);
    const triggered = await api.request<DagRunResponse>("POST", `api/v2/dags/${DAG}/dagRuns`, { body: { conf: { name: "takeover" } } });
    let holder: number | undefined;
    let leaseEnd: Date | undefined;
    try {
      await pauseReached(pause);
      await ensureRunner(host2); // the other runner of the pool, ready before the holder dies
      await ensureKeeper(ctx);
      holder = runnerPid(ctx);
      assert.ok(holder !== undefined, "the test stand's runner holds the try");
      leaseEnd = await killHolder(holder, triggered.dag_run_id, "farewell");
    } finally {
      await releasePause(pause); // the dead try never goes on; the takeover's try passes the released point
    }
    const ended = await api2.request<DagRunResponse>("GET", `${runPath(triggered.dag_run_id)}/wait`, { query: { timeout: 120 }, timeoutMs: 150_000 });
    const tasks = await tasksOn(api2, triggered.dag_run_id);
    assert.equal(ended.state, "success", `the run ended ${ended.state} on the second host: ${[...tasks.values()].map((t) => `${t.task_id} ${t.state} try ${t.try_number}`).join(", ")}`);
    await assertTakenOverAfterLease(triggered.dag_run_id, "farewell", leaseEnd);
    const farewell = tasks.get("farewell");
    assert.equal(farewell?.state, "success");
    assert.equal(farewell?.try_number, 2, "farewell's second try, run by the second host after the takeover");
    // the keeper brings the killed runner back, with no command typed
    const deadline = Date.now() + 120_000;
    for (;;) {
      const pid = runnerPid(ctx);
      if (pid !== undefined && pid !== holder && (await runnerHealthy(2000, ctx.config).catch(() => false))) break;
      if (Date.now() > deadline) {
        const kept = readKeeperView(ctx).services.find((s) => s.service === "runner");
        assert.fail(`the keeper did not start the killed runner again within 120 s; it says: ${kept ? `${kept.state}: ${kept.message}` : "no record"}`);
      }
      await sleep(250);
    }
  });

  faultTest("sigstop-holder", "a runner SIGSTOPped past its lease, then resumed: the other took its task over, and its late result is refused and logged", async () => {
    await stopKeeper(ctx); // the keeper would restart a runner frozen past hung_after: this freeze is the test's
    await stopRunner(host2); // the test stand's runner takes the task
    await ensureRunner(ctx);
    const [pause] = await armRunnerPauses([{ dag: DAG, task: "farewell", phase: "before" }], "pool: freeze the holder");
    assert.ok(pause !== undefined);
    const triggered = await api.request<DagRunResponse>("POST", `api/v2/dags/${DAG}/dagRuns`, { body: { conf: { name: "frozen" } } });
    const frozen = runnerPid(ctx);
    assert.ok(frozen !== undefined);
    const log = nodeServicePaths(ctx, "runner").log;
    const logBefore = existsSync(log) ? statSync(log).size : 0;
    try {
      await pauseReached(pause);
      await ensureRunner(host2);
      process.kill(frozen, "SIGSTOP");
      await releasePause(pause); // released while its holder is frozen: only a thawed holder goes on
      const ended = await api2.request<DagRunResponse>("GET", `${runPath(triggered.dag_run_id)}/wait`, { query: { timeout: 120 }, timeoutMs: 150_000 });
      assert.equal(ended.state, "success", "the second host finished the run while the first was frozen");
    } finally {
      process.kill(frozen, "SIGCONT");
      await releasePause(pause);
    }
    // thawed, the first runner's try ends (its function, or its lease found lost first): either
    // result comes too late and is refused
    const refusal = /late (success|failed|lost) result refused: try 1 no longer holds the task/;
    const deadline = Date.now() + 60_000;
    let tail = "";
    for (;;) {
      tail = readFileSync(log, "utf8").slice(logBefore);
      if (tail.split("\n").some((line) => refusal.test(line) && line.includes(triggered.dag_run_id))) break;
      if (Date.now() > deadline) assert.fail(`the thawed runner (pid ${frozen}) never logged ${String(refusal)} for ${triggered.dag_run_id}; its log since: ${tail.slice(-1500)}`);
      await sleep(250);
    }
    assert.equal(runnerPid(ctx), frozen, "the same process, thawed (nothing restarted it)");
    const farewell = (await tasksOn(api2, triggered.dag_run_id)).get("farewell");
    assert.deepEqual([farewell?.state, farewell?.try_number], ["success", 2], "the takeover's result stands; the late one changed nothing");
    assert.equal((await api.request<DagRunResponse>("GET", runPath(triggered.dag_run_id))).state, "success");
  });

  faultTest("kill-world-task", "kill -9 of the runner running a world task: the second host's runner takes it over after the lease, the step ends green, position + 1, its day exactly once in ODS", async () => {
    await stopRunner(host2); // the test stand's runner takes the step's tasks
    await ensureRunner(ctx);
    const position = Number(await readPositionText());
    const expected = expectedDay(position);
    const [pause] = await armRunnerPauses([{ dag: "world_next_day", task: "wait_for_hits", phase: "before" }], "pool: kill a world task's holder");
    assert.ok(pause !== undefined);
    const triggered = await api.request<DagRunResponse>("POST", "api/v2/dags/world_next_day/dagRuns", { body: { conf: { days: 1 } } });
    let holder: number | undefined;
    let leaseEnd: Date | undefined;
    try {
      await pauseReached(pause); // the day is played into Kafka; the try that waits for it is held
      await ensureRunner(host2);
      await ensureKeeper(ctx); // brings the killed runner back meanwhile; it does not decide who takes the task
      holder = runnerPid(ctx);
      assert.ok(holder !== undefined);
      leaseEnd = await killHolder(holder, triggered.dag_run_id, "wait_for_hits");
    } finally {
      await releasePause(pause);
    }
    const step = `api/v2/dags/world_next_day/dagRuns/${encodeURIComponent(triggered.dag_run_id)}`;
    const ended = await api2.request<DagRunResponse>("GET", `${step}/wait`, { query: { timeout: 300 }, timeoutMs: 330_000 });
    const page = await api2.request<{ task_instances: TaskInstanceResponse[] }>("GET", `${step}/taskInstances`);
    const tries = page.task_instances.map((t) => `${t.task_id} ${t.state} try ${t.try_number}`).join(", ");
    assert.equal(ended.state, "success", `world_next_day ended ${ended.state}: ${tries}`);
    const waitForHits = page.task_instances.find((t) => t.task_id === "wait_for_hits");
    assert.equal(waitForHits?.try_number, 2, `wait_for_hits's second try ran the takeover: ${tries}`);
    await assertTakenOverAfterLease(triggered.dag_run_id, "wait_for_hits", leaseEnd);
    assert.equal(await readPositionText(), String(position + 1), "the position advanced by exactly one day");
    assert.equal(await scalar(`SELECT count() AS n FROM ods.event_dist FINAL WHERE EventDate = '${expected.date}'`), expected.valid, `ODS holds every valid hit of ${expected.date}`);
    assert.equal(await scalar(`SELECT uniqExact(WatchID) AS n FROM ods.event_dist WHERE EventDate = '${expected.date}'`), expected.valid, "no hit lost or doubled");
  });
  faults.checkEveryPointHasATest();
});
