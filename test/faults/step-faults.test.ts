// Faults during a world step, on the test stand (never the user's): the runner SIGKILLed mid
// world_next_day, one ClickHouse node frozen (SIGSTOP) during a step, Kafka stopped during a step,
// Postgres restarted, and killed with -9, at task boundaries of a step under a running runner. In
// make test each of these matrices runs the sample its seed draws (testkit/matrices.ts), in make
// test-full every point: every single fault, Postgres at all 22 boundaries each way.
// Each asserts the run's outcome, the position, and that the day landed exactly once in ODS (valid
// hits after dedup, invalid hits in ods.event_errors), with DDS and DM built for it and unchanged by
// one more etl_pipeline. Each fault strikes at its moment by construction: a pause point holds the
// run (runner.pause_points) or the loader (/fail-points) there until the fault is done.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runnerPid } from "../../src/services/runner-service.ts";
import { serviceGroups, standContext, standUp } from "../../src/stand/stand.ts";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { expectCanonicalOds } from "../../testkit/world/world-checks.ts";
import {
  api,
  applicationDatabases,
  describeRun,
  latestRun,
  positionHistory,
  taskLog,
  readPositionText,
  runDag,
  runUpCommand,
  scalar,
  taskInstances,
  triggerRun,
  useRunnerService,
  waitForRun,
} from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { armLoaderPause, expectedDay, releaseAllLoaderPauses } from "../../testkit/world/loader-day.ts";
import { armRunnerPauses, pauseReached, releaseAllPauses, releasePause, releasePauses } from "../../testkit/runner/runner-pauses.ts";
import { HITS_TOPIC } from "../../src/world/constants.ts";
import { forEachPoint, runPoint, sampleMatrix } from "../../testkit/matrix.ts";
import { POSTGRES_AT_BOUNDARIES, STEP_FAULT_KINDS } from "../../testkit/matrices.ts";

const quiet = (): undefined => undefined;

interface LayerCounts {
  odsFinal: number;
  odsUnique: number;
  errors: number;
  dds: number;
  dm: number;
}

async function layerCounts(date: string): Promise<LayerCounts> {
  return {
    odsFinal: await scalar(`SELECT count() AS n FROM ods.event_dist FINAL WHERE EventDate = '${date}'`),
    odsUnique: await scalar(`SELECT uniqExact(WatchID) AS n FROM ods.event_dist WHERE EventDate = '${date}'`),
    errors: await scalar("SELECT count() AS n FROM ods.event_errors_dist FINAL"),
    dds: await scalar(`SELECT count() AS n FROM dds.session_v WHERE session_date = '${date}'`),
    dm: await scalar(`SELECT sum(sessions) AS n FROM dm.daily_traffic_v WHERE report_date = '${date}'`),
  };
}

async function waitForTask(dagId: string, runId: string, taskId: string, states: readonly string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ti = (await taskInstances(dagId, runId)).get(taskId);
    if (ti && states.includes(ti.state ?? "")) return;
    if (Date.now() > deadline) throw new Error(`${dagId}/${runId}: ${taskId} never reached ${states.join("/")} (is ${ti?.state ?? "absent"})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("faults during a world step (test stand)", () => {
  const world = useWorldSuite({
    wholeWorld: true,
    setUp: async () => {
      // what an earlier test process that died mid-test left armed would hold this file's runs
      const left = (await releaseAllPauses()) + (await releaseAllLoaderPauses(standContext(quiet).config));
      if (left > 0) console.log(`released ${left} pause points an earlier test left armed`);
    },
    tearDown: () => standUp(standContext(quiet)), // whatever a test stopped is started again
  });

  /** Steps one day under `fault`, then checks the outcome, the position and the layers. */
  async function stepUnder(name: string, fault: (runId: string) => Promise<void>): Promise<void> {
    const position = Number(await readPositionText());
    const expected = expectedDay(position);
    const errorsBefore = await scalar("SELECT count() AS n FROM ods.event_errors_dist FINAL");
    const started = Date.now();
    const run = await triggerRun("world_next_day", { days: 1 });
    await fault(run.dag_run_id);
    const finished = await waitForRun("world_next_day", run.dag_run_id, 600);
    const seconds = (Date.now() - started) / 1000;
    const tasks = await taskInstances("world_next_day", run.dag_run_id);
    console.log(`${name}: world_next_day ${finished.state} in ${seconds.toFixed(1)} s; tries: ${[...tasks.values()].map((t) => `${t.task_id} ${t.try_number}`).join(", ")}`);
    assert.equal(finished.state, "success", describeRun({ run: finished, tasks, seconds }));
    assert.equal(await readPositionText(), String(position + 1), "the position advanced by exactly one day");

    const counts = await layerCounts(expected.date);
    assert.equal(counts.odsFinal, expected.valid, `ODS holds every valid hit of ${expected.date}, once`);
    assert.equal(counts.odsUnique, expected.valid, "no hit lost or doubled");
    assert.equal(counts.errors - errorsBefore, expected.invalid, "each invalid hit landed in ods.event_errors once");
    assert.ok(counts.dds > 0 && counts.dm > 0, `DDS and DM were built for ${expected.date}: ${JSON.stringify(counts)}`);
    const again = await runDag("etl_pipeline", {}, 300);
    assert.equal(again.run.state, "success", describeRun(again));
    assert.deepEqual(await layerCounts(expected.date), counts, "one more etl_pipeline changes nothing");
  }

  /** Stops one stand service as make stand-down would (its own stop signal), then starts it again. */
  async function outage(service: string, seconds: number, whileDown: () => Promise<unknown> = () => Promise.resolve()): Promise<void> {
    const ctx = standContext(quiet);
    const definition = serviceGroups(ctx).flat().find((s) => s.name === service);
    assert.ok(definition, `the stand has a service ${service}`);
    const stoppedAt = Date.now();
    assert.notEqual(await ctx.supervisor.stop(service, definition.stopSignal, definition.stopGraceMs), "not-running");
    await whileDown();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    await standUp(ctx);
    console.log(`${service} was down ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`);
  }

  /** The single faults of a step: in make test the ones the seed draws (testkit/matrices.ts), in make test-full all. */
  const SINGLE_FAULTS: Record<string, { title: string; strike: () => Promise<void> }> = {
    "runner-sigkill": {
      title: "the runner SIGKILLed while the step waits for ODS: the step finishes after the restart, with no user action",
      strike: async () => {
        const ctx = standContext(quiet);
        // the loader holds the day's first cycle, so wait_for_hits is running and cannot finish yet
        const loaderPause = await armLoaderPause(ctx.config, "before_insert", HITS_TOPIC.name);
        await stepUnder("SIGKILL runner", async (runId) => {
          await loaderPause.reached();
          await waitForTask("world_next_day", runId, "wait_for_hits", ["running"]);
          const pid = runnerPid(ctx);
          assert.ok(pid !== undefined, "the runner service runs");
          process.kill(pid, "SIGKILL");
          const killedAt = Date.now();
          await new Promise((r) => setTimeout(r, 500));
          await useRunnerService(); // make up would do the same: start the runner again
          console.log(`runner restarted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
          await loaderPause.release();
        });
      },
    },
    "clickhouse-frozen": {
      title: "one ClickHouse node frozen (SIGSTOP) for 20 s from set_position on: success once it resumes, the day once",
      strike: async () => {
        const ctx = standContext(quiet);
        const node = ctx.config.clickhouse.nodes[1]?.name ?? "ch2";
        const [pause] = await armRunnerPauses([{ dag: "world_next_day", task: "set_position", phase: "before" }], "step-faults ch2 frozen");
        assert.ok(pause !== undefined);
        await stepUnder(`SIGSTOP ${node}`, async () => {
          await pauseReached(pause);
          const pid = ctx.supervisor.runningPid(`clickhouse-${node}`);
          assert.ok(pid !== undefined, `clickhouse-${node} runs`);
          process.kill(pid, "SIGSTOP");
          try {
            await releasePause(pause);
            await new Promise((r) => setTimeout(r, 20_000));
          } finally {
            process.kill(pid, "SIGCONT");
          }
        });
      },
    },
    "kafka-stopped": {
      title: "Kafka stopped for 10 s while the step waits for ODS: success after backoff, the day once",
      strike: async () => {
        const loaderPause = await armLoaderPause(standContext(quiet).config, "before_insert", HITS_TOPIC.name);
        await stepUnder("Kafka stopped", async (runId) => {
          // the loader holds the day's first cycle, so wait_for_hits is running and cannot finish yet
          await loaderPause.reached();
          await waitForTask("world_next_day", runId, "wait_for_hits", ["running"]);
          await outage("kafka", 10, () => loaderPause.release());
        });
      },
    },
    "rebuild-during-live-day": {
      title: "a rebuild started during a live day waits for the day, then builds the canonical world; the day was played once",
      strike: async () => {
        const position = Number(await readPositionText());
        const [pause] = await armRunnerPauses([{ dag: "world_live_day", task: "play_live_day", phase: "before" }], "step-faults rebuild during a live day");
        assert.ok(pause !== undefined);
        // the rebuild is queued while the pause holds the live day (by construction), so the day itself may be fast
        const live = await triggerRun("world_live_day", { speed: 200_000 });
        await pauseReached(pause); // the live day runs and holds the world
        const rebuild = await triggerRun("world_recreate");
        const waiting = await api.request<DagRunResponse>("GET", `api/v2/dags/world_recreate/dagRuns/${rebuild.dag_run_id}`);
        assert.equal(waiting.state, "queued");
        assert.equal(waiting.waiting_for, `world held by world_live_day/${live.dag_run_id}`);
        await releasePause(pause);
        const liveDone = await waitForRun("world_live_day", live.dag_run_id, 600);
        assert.equal(liveDone.state, "success");
        const rebuilt = await waitForRun("world_recreate", rebuild.dag_run_id, 600);
        assert.equal(rebuilt.state, "success");
        assert.ok(rebuilt.start_date !== null && liveDone.end_date !== null && rebuilt.start_date >= liveDone.end_date, "the rebuild started after the day ended");
        // the live day set its position, then the rebuild invalidated, reset and set the starting position
        const changes = (await positionHistory()).filter((c) => c.changed_at >= (liveDone.start_date ?? "")).map((c) => `${c.dag_id}:${c.new_value}`);
        assert.deepEqual(changes, [
          `world_live_day:${position + 1}`,
          "world_recreate:-1",
          "world_recreate:0",
          `world_initialize:${world.passport.WORLD_STARTING_DAYS}`,
        ]);
        await expectCanonicalOds(world.passport);
      },
    },
    "creation-stopped": {
      title: "a creation stopped after play_starting_days leaves position 0; the next make up clears the residue and builds the passport's world",
      strike: async () => {
        // the creation is held right after play_starting_days, before wait_for_ods: stopped there
        const note = "step-faults creation stopped";
        const [pause] = await armRunnerPauses([{ dag: "world_initialize", task: "wait_for_ods", phase: "before" }], note);
        assert.ok(pause !== undefined);
        const rebuild = await triggerRun("world_recreate");
        const held = await pauseReached(pause);
        const child = held.reached_by?.split(" ")[0] ?? "";
        assert.equal((await taskInstances("world_initialize", child)).get("play_starting_days")?.state, "success");
        const marked = await api.request<DagRunResponse>("PATCH", `api/v2/dags/world_recreate/dagRuns/${rebuild.dag_run_id}`, { body: { state: "failed" } });
        assert.equal(marked.state, "failed");
        assert.equal((await api.request<DagRunResponse>("GET", `api/v2/dags/world_initialize/dagRuns/${child}`)).state, "failed", "the child ended with it");
        await releasePauses(note);
        assert.equal(await readPositionText(), "0");
        assert.equal((await applicationDatabases()).length, 5, "the stopped creation left its databases");

        const up = await runUpCommand(["up"]);
        assert.equal(up.code, 0, up.stdout + up.stderr);
        assert.equal(await readPositionText(), String(world.passport.WORLD_STARTING_DAYS));
        await expectCanonicalOds(world.passport);
        const run = await latestRun("world_initialize", "make_up__");
        assert.match(await taskLog("world_initialize", run.dag_run_id, "clear_residue"), /residue of a creation that did not finish.*database ods/);
      },
    },
  };
  assert.deepEqual(Object.keys(SINGLE_FAULTS).sort(), [...STEP_FAULT_KINDS.points].sort(), "a test for every point of step-faults.kind");
  const singleFaults = sampleMatrix(STEP_FAULT_KINDS);
  for (const kind of singleFaults.points) {
    const fault = SINGLE_FAULTS[kind];
    assert.ok(fault, `step-faults: no test for the point ${kind}`);
    it(`${fault.title} [${singleFaults.matrix.name}=${kind}; ${singleFaults.how}]`, () => runPoint(singleFaults, kind, fault.strike));
  }

  for (const [kind, matrix] of [["restarted", POSTGRES_AT_BOUNDARIES[0]], ["killed with -9 and started", POSTGRES_AT_BOUNDARIES[1]]] as const) {
    assert.ok(matrix);
    const sample = sampleMatrix(matrix);
    it(`Postgres ${kind} at task boundaries of a step (${sample.how}): the same runner process carries on, the step ends green`, async () => {
      const ctx = standContext(quiet);
      const definition = serviceGroups(ctx).flat().find((s) => s.name === "postgres");
      assert.ok(definition, "the stand has a service postgres");
      const pidBefore = runnerPid(ctx);
      assert.ok(pidBefore !== undefined, "the runner service runs");
      const note = `step-faults postgres ${kind}`;
      const pauses = await armRunnerPauses(sample.points, note);
      const outages: number[] = [];
      try {
        await stepUnder(`Postgres ${kind} (rerun: ${sample.rerunAll})`, async () => {
          const strike = async (where: string): Promise<void> => {
            const downAt = Date.now();
            const stopped = await ctx.supervisor.stop("postgres", kind === "restarted" ? definition.stopSignal : "SIGKILL", definition.stopGraceMs);
            assert.notEqual(stopped, "not-running", `Postgres was running ${where}`);
            await standUp(ctx);
            outages.push(Date.now() - downAt);
            assert.equal(runnerPid(ctx), pidBefore, `the runner process lived through Postgres ${kind} ${where}`);
          };
          const byPoint = new Map(sample.points.map((p, i) => [p, pauses[i]]));
          await forEachPoint(sample, async (point) => {
            const id = byPoint.get(point);
            assert.ok(id !== undefined);
            const held = await pauseReached(id);
            const where = `at ${held.dag_id}.${held.task_id} ${held.phase} (${held.reached_by ?? "?"})`;
            await strike(where);
            await releasePause(id);
          });
        });
      } finally {
        await releasePauses(note);
      }
      const sorted = [...outages].sort((a, b) => a - b);
      console.log(`Postgres ${kind} ${outages.length} times; outage min/median/max ${sorted[0]} / ${sorted[Math.floor(sorted.length / 2)]} / ${sorted.at(-1)} ms`);
      assert.equal(outages.length, sample.points.length, `a fault at every sampled boundary (rerun them: ${sample.rerunAll})`);
      assert.equal(runnerPid(ctx), pidBefore, "the same runner process carried on (it was not restarted)");
    });
  }

  it("world_next_day and world_live_day triggered together: the second waits for the world, each plays its own day", async () => {
    const position = Number(await readPositionText());
    const dayOne = expectedDay(position);
    const dayTwo = expectedDay(position + 1);
    const days = [dayOne, dayTwo];
    const errorsBefore = await scalar("SELECT count() AS n FROM ods.event_errors_dist FINAL");
    const [next, live] = await Promise.all([triggerRun("world_next_day", { days: 1 }), triggerRun("world_live_day", { speed: 200_000 })]);
    const waiting = await api.request<DagRunResponse>("GET", `api/v2/dags/world_live_day/dagRuns/${live.dag_run_id}`);
    const holder = await api.request<DagRunResponse>("GET", `api/v2/dags/world_next_day/dagRuns/${next.dag_run_id}`);
    // one of them holds the world; the other says so while it waits
    const [first, second] = waiting.waiting_for === null ? [waiting, holder] : [holder, waiting];
    assert.equal(second.state, "queued");
    assert.equal(second.waiting_for, `world held by ${first.dag_id}/${first.dag_run_id}`);
    for (const run of [next, live]) {
      const done = await waitForRun(run.dag_id, run.dag_run_id, 600);
      assert.equal(done.state, "success", `${run.dag_id}/${run.dag_run_id}`);
    }
    assert.equal(await readPositionText(), String(position + 2), "two runs, two days");
    for (const day of days) {
      const counts = await layerCounts(day.date);
      assert.equal(counts.odsFinal, day.valid, `${day.date} played once`);
      assert.equal(counts.odsUnique, day.valid);
    }
    assert.equal((await scalar("SELECT count() AS n FROM ods.event_errors_dist FINAL")) - errorsBefore, dayOne.invalid + dayTwo.invalid);
  });

  it("the API still answers about runs after the faults", async () => {
    const page = await api.request<{ total_entries: number }>("GET", "api/v2/dags/world_next_day/dagRuns");
    assert.ok(page.total_entries >= 2);
  });
});
