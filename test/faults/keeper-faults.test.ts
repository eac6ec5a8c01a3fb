// The keeper (src/keeper/policy.ts) against real processes on the test stand, where `stand up` does
// not start it (keeper.autostart: false) and this file does: each fault is made for real and no
// command is typed until the outcome is asserted.
// - a frozen ZooKeeper past its start-up time: `stand up` alone stops it and starts it again.
// - Postgres left in a smart shutdown (SIGTERM with a client connected): alive, serving nobody;
//   the keeper stops it and starts it again after hung_after.
// - kill -9 of every service in turn while world_next_day streams a day in (make test: the services
//   the seed draws, testkit/matrices.ts; make test-full: all): each is back, counted once, and the
//   day lands exactly (testkit/world/faulted-day.ts).
// - a ClickHouse node kept dead (the keeper fail point: each start exits at once): crash-looping,
//   named by check-services and doctor; rebuild-storage refuses in seconds and touches nothing.
// - the keeper itself killed: the runner starts it again, its records carried over.
// - a service stopped on purpose stays stopped.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { launchArgs, postgresUrl, repoRoot } from "../../src/config/stand.ts";
import { childExitCode, childOutput, errorCode } from "../../src/errors.ts";
import type { ServiceRecord } from "../../src/keeper/policy.ts";
import { ensureKeeper, KEEPER_SERVICE, readKeeperView, stopKeeper } from "../../src/keeper/keeper-service.ts";
import { ensureLoader, loaderPid, stopLoader } from "../../src/services/loader-service.ts";
import { nodeServiceSupervisor } from "../../src/services/node-service.ts";
import { startFailPointFile } from "../../src/services/fail-points.ts";
import { standContext, standUp } from "../../src/stand/stand.ts";
import { releaseAllLoaderPauses, waitForLoaderConsuming } from "../../testkit/world/loader-day.ts";
import { playDay } from "../../testkit/world/faulted-day.ts";
import { api, readPositionText, taskInstances } from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { forEachPoint, sampledTests, sampleMatrix } from "../../testkit/matrix.ts";
import { KEEPER_FAULTS, KEEPER_KILLS } from "../../testkit/matrices.ts";

const execFileAsync = promisify(execFile);
const quiet = (): undefined => undefined;
const ctx = standContext(quiet);
const keeperConfig = ctx.config.keeper;
const NODE_SERVICES = new Set(["loader", "runner", KEEPER_SERVICE]);

function pidOf(name: string): number | undefined {
  return NODE_SERVICES.has(name) ? nodeServiceSupervisor(ctx, name).runningPid(name) : ctx.supervisor.runningPid(name);
}

function kept(name: string): ServiceRecord | undefined {
  return readKeeperView(ctx).services.find((r) => r.service === name);
}

/** Waits for the keeper's current records to show `ok` for the service; says what it saw on timeout. */
async function waitKept(name: string, what: string, ok: (r: ServiceRecord) => boolean, timeoutMs: number): Promise<ServiceRecord> {
  const deadline = Date.now() + timeoutMs;
  let last = "no record yet";
  for (;;) {
    const view = readKeeperView(ctx);
    const record = view.services.find((r) => r.service === name);
    if (record) last = `${record.state}: ${record.message} (restarts ${record.restarts})`;
    if (view.current && record && ok(record)) return record;
    if (Date.now() > deadline) assert.fail(`the keeper never showed ${name} ${what} within ${timeoutMs / 1000} s; last: ${last}; ${view.note}`);
    await sleep(200);
  }
}

/** Waits for a task of a run to reach `state` (the loader's pause holds the day meanwhile, so nothing else moves). */
async function waitForTask(dagId: string, runId: string, taskId: string, state: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = (await taskInstances(dagId, runId)).get(taskId);
    if (task?.state === state) return;
    if (Date.now() > deadline) assert.fail(`${dagId}/${runId} task ${taskId} never reached ${state} within ${timeoutMs / 1000} s (it is ${task?.state ?? "not there"})`);
    await sleep(250);
  }
}

/** A CLI of the stand as a user types it, on the test stand (STAND_CONFIG is inherited); its exit code and output. */
async function cli(script: string, command: string): Promise<{ code: number; out: string; seconds: number }> {
  const started = Date.now();
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, launchArgs(script, command), { cwd: repoRoot, timeout: 300_000 });
    return { code: 0, out: stdout + stderr, seconds: (Date.now() - started) / 1000 };
  } catch (err) {
    const { stdout, stderr } = childOutput(err);
    const code = childExitCode(err);
    return { code, out: stdout + stderr, seconds: (Date.now() - started) / 1000 };
  }
}

async function worldRecreateRuns(): Promise<number> {
  const page = await api.request<{ total_entries: number; dag_runs: DagRunResponse[] }>("GET", "api/v2/dags/world_recreate/dagRuns", { query: { limit: 1 } });
  return page.total_entries;
}

const failPointsDir = path.dirname(startFailPointFile(ctx, "x"));

describe("the keeper heals the stand (test stand)", { skip: keeperConfig ? false : "the test stand config has no keeper section" }, () => {
  // each fault is a point of keeper-faults.fault: make test runs the ones the seed draws, make test-full all
  const faults = sampledTests(sampleMatrix(KEEPER_FAULTS), it);
  const faultTest = faults.test;
  useWorldSuite({
    wholeWorld: true,
    setUp: async () => {
      rmSync(failPointsDir, { recursive: true, force: true }); // what a test process that died left armed
      await releaseAllLoaderPauses(ctx.config);
      await ensureKeeper(ctx);
    },
    tearDown: async () => {
      rmSync(failPointsDir, { recursive: true, force: true });
      await stopKeeper(ctx); // the other fault tests want their faults to stay
      await standUp(ctx);
      await ensureLoader(ctx);
      await waitForLoaderConsuming(ctx.config);
    },
  });

  faultTest("frozen-zookeeper", "make stand-up alone takes a frozen ZooKeeper (SIGSTOP, past its start-up time) as down: stops it and starts it again", async () => {
    const record = ctx.supervisor.readPid("zookeeper");
    assert.ok(record, "zookeeper runs");
    // "past its start-up time" by construction: an earlier suite may have started this ZooKeeper a
    // minute ago, so its pid record is dated back past the start-up time (health_timeout_seconds)
    const pastStartup = new Date(Date.now() - (ctx.config.health_timeout_seconds + 60) * 1000).toISOString();
    writeFileSync(ctx.supervisor.pidFile("zookeeper"), JSON.stringify({ ...record, startedAt: pastStartup }));
    await stopKeeper(ctx); // stand up alone, as a user types it
    process.kill(record.pid, "SIGSTOP");
    try {
      const { code, out } = await cli("src/stand/cli.ts", "up");
      assert.equal(code, 0, out);
      assert.match(out, new RegExp(`zookeeper: pid ${record.pid} is alive but does not serve`), out);
      const now = ctx.supervisor.readPid("zookeeper");
      assert.ok(now && now.pid !== record.pid, "a new zookeeper runs");
    } finally {
      try {
        process.kill(record.pid, "SIGCONT"); // if it still exists at all
      } catch {
        // gone: stopped by stand up, as it should be
      }
      await ensureKeeper(ctx);
    }
  });

  faultTest("smart-shutdown", "Postgres left in a smart shutdown (SIGTERM, a client connected) refuses every new client; the keeper stops it and starts it again", async () => {
    const before = kept("postgres")?.restarts ?? 0;
    const pid = pidOf("postgres");
    assert.ok(pid !== undefined, "postgres runs");
    const holder = new pg.Client({ connectionString: postgresUrl(ctx.config.postgres.runner_database, ctx.config) });
    holder.on("error", () => undefined); // the restart ends this connection
    await holder.connect();
    try {
      process.kill(pid, "SIGTERM"); // smart shutdown: waits for every client to leave
      let refused: string | undefined;
      for (let i = 0; i < 50 && refused === undefined; i++) {
        const probe = new pg.Client({ connectionString: postgresUrl(ctx.config.postgres.runner_database, ctx.config) });
        try {
          await probe.connect();
          await probe.end();
          await sleep(100);
        } catch (err) {
          refused = errorCode(err);
        }
      }
      assert.equal(refused, "57P03", "a new client is refused with cannot_connect_now (the database system is shutting down)");
      const back = await waitKept("postgres", "restarted and up", (r) => r.restarts > before && r.state === "up", 240_000);
      assert.equal(back.restarts, before + 1, "started again once");
      assert.notEqual(back.pid, pid);
      assert.match(back.lastExit?.how ?? "", /alive but did not serve for \d+ s/);
    } finally {
      await holder.end().catch(() => undefined);
    }
  });

  const kills = sampleMatrix(KEEPER_KILLS);
  faultTest("kill-9", `kill -9 of services in turn while a day streams in (${kills.how}), no command typed: each is back and counted once, the day lands exactly`, async () => {
    const order = kills.points;
    const before = new Map(order.map((name) => [name, kept(name)?.restarts ?? 0]));
    const said: string[] = [];
    // the day's first cycle is held before its INSERT: every kill lands while the day is read and not placed
    await playDay(ctx.config, "kill -9 each service", 0, "before_insert", async ({ pause, runId }) => {
      await pause.reached();
      // the day is all in Kafka first: a producer killed mid-day sends it again on its next try
      // (at least once: ODS keeps it once, but the day's offsets would count it twice)
      await waitForTask("world_next_day", runId, "play_days", "success", 300_000);
      await forEachPoint(kills, async (name) => {
        const pid = pidOf(name);
        assert.ok(pid !== undefined, `${name} runs`);
        process.kill(pid, "SIGKILL");
        const killedAt = Date.now();
        const back = await waitKept(name, "started again and up", (r) => r.restarts > (before.get(name) ?? 0) && r.state === "up" && r.pid !== pid, 180_000);
        said.push(`${name} ${pid} → ${back.pid ?? "?"} in ${((Date.now() - killedAt) / 1000).toFixed(1)} s`);
      });
      // the loader took the pause point with it; the new one reads from the committed offsets
    });
    console.log(`kill -9 in turn: ${said.join(", ")}`);
    for (const name of order) {
      const record = kept(name);
      const rerun = kills.rerun(name);
      assert.equal(record?.restarts, (before.get(name) ?? 0) + 1, `${name} was started again exactly once (rerun: ${rerun})`);
      assert.match(record?.lastExit?.how ?? "", /vanished|killed by SIGKILL/, `${name}'s last exit is the kill (rerun: ${rerun})`);
      assert.equal(record?.state, "up", `rerun: ${rerun}`);
    }
    const { code, out } = await cli("src/stand/cli.ts", "status");
    assert.equal(code, 0, `check-services is green after the kills:\n${out}`);
    for (const name of order) assert.match(out, new RegExp(`${name} +port \\S+ +restarts [1-9]`), `check-services shows ${name}'s restart`);
  });

  faultTest("crash-loop", "a ClickHouse node kept dead (each start exits at once) is crash-looping: check-services and doctor name it, rebuild-storage refuses in seconds and touches nothing; make up brings it back", async () => {
    assert.ok(keeperConfig);
    const name = "clickhouse-ch2";
    const before = kept(name)?.restarts ?? 0;
    const position = await readPositionText();
    const recreates = await worldRecreateRuns();
    const pid = pidOf(name);
    assert.ok(pid !== undefined, `${name} runs`);
    mkdirSync(failPointsDir, { recursive: true });
    writeFileSync(startFailPointFile(ctx, name), "armed by test/faults/keeper-faults.test.ts\n");
    try {
      process.kill(pid, "SIGKILL");
      const looping = await waitKept(name, "crash-looping", (r) => r.state === "crash-looping", 120_000);
      assert.equal(looping.quickDeaths, keeperConfig.restart_limit, "crash-looping at restart_limit quick deaths in a row");
      // the kill was a quick death too, and so was an earlier one within healthy_after (the kill -9 test's)
      const starts = looping.restarts - before;
      assert.ok(starts >= 1 && starts <= keeperConfig.restart_limit - 1, `started again ${starts} times before giving up`);
      assert.equal(looping.lastExit?.how, "exited with code 3", "the keeper saw its child's exit code");
      assert.match(looping.lastExit?.logTail.join("\n") ?? "", /keeper fail point/, "its last log lines are kept");
      assert.match(looping.message, /left down/);

      const status = await cli("src/stand/cli.ts", "status");
      assert.equal(status.code, 1, status.out);
      assert.match(status.out, /FAIL clickhouse-ch2 .*CRASH-LOOPING/, status.out);

      const doctor = await cli("src/world-ops/cli.ts", "doctor");
      assert.equal(doctor.code, 1, doctor.out);
      assert.match(doctor.out, /STUCK clickhouse-ch2: crash-looping/, doctor.out);
      assert.match(doctor.out, /fix: read .*make up/, doctor.out);

      const rebuild = await cli("src/world-ops/cli.ts", "rebuild-storage");
      console.log(`rebuild-storage with ${name} kept dead: exit ${rebuild.code} in ${rebuild.seconds.toFixed(1)} s`);
      assert.equal(rebuild.code, 1, rebuild.out);
      assert.match(rebuild.out, /refused after [\d.]+ s, before touching anything/, rebuild.out);
      assert.match(rebuild.out, /clickhouse-ch2/, "the refusal names the node");
      assert.ok(rebuild.seconds < 60, `refused in ${rebuild.seconds} s`);
      assert.equal(await worldRecreateRuns(), recreates, "no world_recreate run was triggered");
      assert.equal(await readPositionText(), position, "the position is untouched");
    } finally {
      rmSync(failPointsDir, { recursive: true, force: true });
    }
    await standUp(ctx); // make up's first half: a new start request
    const back = await waitKept(name, "up again", (r) => r.state === "up", 120_000);
    assert.equal(back.quickDeaths, 0);
  });

  faultTest("keeper-killed", "the keeper killed: the runner starts it again and its records carry over", async () => {
    const pid = pidOf(KEEPER_SERVICE);
    assert.ok(pid !== undefined, "the keeper runs");
    const restarts = kept("postgres")?.restarts;
    process.kill(pid, "SIGKILL");
    const deadline = Date.now() + 60_000;
    // one reading per look: two readings in one condition raced the kill (the first saw the killed
    // keeper still alive, the second saw it gone, and the wait ended with no keeper at all)
    let again = pidOf(KEEPER_SERVICE);
    while (Date.now() < deadline && (again === undefined || again === pid)) {
      await sleep(200);
      again = pidOf(KEEPER_SERVICE);
    }
    assert.ok(again !== undefined && again !== pid, `a new keeper runs (killed pid ${pid}; now ${again ?? "none"})`);
    const record = await waitKept("postgres", "looked at by the new keeper", (r) => r.state === "up", 60_000);
    assert.equal(readKeeperView(ctx).pid, again);
    assert.equal(record.restarts, restarts, "restart counts carried over from the state file");
  });

  faultTest("stopped-on-purpose", "a service stopped on purpose stays stopped", async () => {
    await stopLoader(ctx);
    await waitKept("loader", "stopped on purpose", (r) => r.state === "stopped", 30_000);
    await sleep(6000); // six more looks of the keeper (one a second), each of which could have started it
    assert.equal(kept("loader")?.state, "stopped");
    assert.equal(loaderPid(ctx), undefined, "the keeper did not start the loader again");
    assert.match(kept("loader")?.message ?? "", /stopped on purpose/);
    await ensureLoader(ctx);
    await waitForLoaderConsuming(ctx.config);
  });
  faults.checkEveryPointHasATest();
});
