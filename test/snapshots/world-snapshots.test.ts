// World snapshots on the test stand (world_snapshot, world_restore; docs/world.md "Snapshots"): a save
// at position p, two days played, a restore, and the world cannot be told from the saved one (the
// guard's reading, a checksum of every row of every table read merged, check-clickhouse, schema in
// sync); the next world_next_day lands exactly day p. A restore waits behind a running step. Every
// refusal fails the DAG at check_snapshot with the world unchanged. A restore killed half way (the
// runner SIGKILLs itself after one part, by a fail point) leaves -1, and the next restore converges;
// a save killed half way leaves a half-written snapshot that no restore takes, and the keeper brings
// the services the dead runner held down back. A snapshot survives the stand stopped and started.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, cpSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ensureKeeper, readKeeperView, stopKeeper } from "../../src/keeper/keeper-service.ts";
import { runnerPid, stopRunner } from "../../src/services/runner-service.ts";
import { SnapshotStore, snapshotsDir } from "../../src/snapshots/store.ts";
import { serviceGroups, standContext, standDown, standUp } from "../../src/stand/stand.ts";
import { serves } from "../../src/services/service.ts";
import { isProcessOurs } from "../../src/services/supervisor.ts";
import { readOdsValidHitsPerDate } from "../../src/world/ods-facts.ts";
import { playedDay } from "../../tasks/hits-consumed.ts";
import { readRestores } from "../../src/snapshots/restores.ts";
import { api, describeRun, readPositionText, runDag, taskInstances, taskLog, triggerRun, useRunnerService, waitForRun, withClickHouse, withRunnerDb } from "../../testkit/world/rest-world.ts";
import { armRunnerPauses, pauseReached, releaseAllPauses, releasePause } from "../../testkit/runner/runner-pauses.ts";
import { CANONICAL_SNAPSHOT, useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { sampledTests, sampleMatrix } from "../../testkit/matrix.ts";
import { SNAPSHOT_SCENARIOS } from "../../testkit/matrices.ts";
import { diffExactWorlds, readExactWorld, type ExactWorld } from "../../testkit/world/world-reading.ts";
import type { DagRunResponse } from "../../src/api/schemas.ts";

const quiet = (): undefined => undefined;
const ctx = standContext(quiet);
const store = new SnapshotStore(ctx.config, ctx.paths);
const failPoints = path.join(snapshotsDir(ctx.paths), ".fail-points");
const SAVED = "t-saved";

function armFailPoint(name: string, content = ""): void {
  mkdirSync(failPoints, { recursive: true });
  writeFileSync(path.join(failPoints, name), content);
}

async function positionInPostgres(): Promise<string | null> {
  return withRunnerDb(async (db) => (await db.query<{ value: string }>("select value from runner.variables where key = 'world_position'")).rows[0]?.value ?? null);
}

async function assertWorldEquals(expected: ExactWorld, what: string): Promise<void> {
  const diff = diffExactWorlds(expected, await readExactWorld(ctx.config));
  assert.deepEqual(diff, [], `${what}:\n  ${diff.join("\n  ")}`);
}

/** world_restore of `name` is red at check_snapshot, its log names `reason`, nothing else ran. */
async function assertRestoreRefused(name: string, reason: RegExp, before: ExactWorld): Promise<void> {
  const refused = await runDag("world_restore", { name }, 120);
  assert.equal(refused.run.state, "failed", describeRun(refused));
  assert.equal(refused.tasks.get("check_snapshot")?.state, "failed");
  assert.equal(refused.tasks.get("check_snapshot")?.try_number, 1, "a refusal is not retried");
  assert.notEqual(refused.tasks.get("invalidate_position")?.state, "success", "nothing after the check ran");
  assert.match(await taskLog("world_restore", refused.run.dag_run_id, "check_snapshot"), reason);
  await assertWorldEquals(before, `the world after the refused restore of '${name}' is as it was`);
}

/** Waits (by its pid) until the stand's runner process is gone: a kill point struck. */
async function runnerGone(pid: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")) {
    if (Date.now() > deadline) throw new Error(`the runner (pid ${pid}) did not die at the kill point within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("world snapshots: save, restore, refusals, kills (test stand)", () => {
  // the save/restore round trip runs always; each other scenario is a point of snapshots.scenario (make test: the ones the seed draws)
  const faults = sampledTests(sampleMatrix(SNAPSHOT_SCENARIOS), it);
  const faultTest = faults.test;
  useWorldSuite({
    wholeWorld: true,
    setUp: async () => {
      await releaseAllPauses();
      await withRunnerDb((db) => db.query("delete from runner.fail_points where note like 'snapshots:%'"));
      rmSync(failPoints, { recursive: true, force: true });
      for (const s of store.list()) if (s.name !== CANONICAL_SNAPSHOT) store.remove(s.name);
    },
    tearDown: async () => {
      rmSync(failPoints, { recursive: true, force: true });
      await withRunnerDb((db) => db.query("delete from runner.fail_points where note like 'snapshots:%'"));
      await standUp(standContext(quiet)); // whatever a test left down is started again
    },
  });
  let saved: ExactWorld;
  let savedPosition: number;

  before(async () => {
    // the whole world's hooks ran: save it once for every test below
    savedPosition = Number(await readPositionText());
    const save = await runDag("world_snapshot", { name: SAVED }, 300);
    assert.equal(save.run.state, "success", describeRun(save));
    console.log(`world_snapshot at position ${savedPosition}: ${save.seconds.toFixed(1)} s`);
    saved = await readExactWorld(ctx.config);
  });

  it("save at p, play two days, restore: the world cannot be told from the saved one, and the next day lands exactly", async () => {
    assert.deepEqual(diffExactWorlds(saved, saved), []);
    const two = await runDag("world_next_day", { days: 2 }, 600);
    assert.equal(two.run.state, "success", describeRun(two));
    assert.equal(await readPositionText(), String(savedPosition + 2));
    assert.notDeepEqual(diffExactWorlds(saved, await readExactWorld(ctx.config)), [], "two days changed the world");

    const restored = await runDag("world_restore", { name: SAVED }, 300);
    assert.equal(restored.run.state, "success", describeRun(restored));
    console.log(`world_restore over position ${savedPosition + 2}: ${restored.seconds.toFixed(1)} s`);
    await assertWorldEquals(saved, "the restored world");
    const status = await api.request<{ status: string; build: { dag_run_id: string } | null }>("GET", "api/v2/system/schema");
    assert.equal(status.status, "in_sync", `schema status after the restore: ${JSON.stringify(status)}`);
    assert.equal(status.build?.dag_run_id, restored.run.dag_run_id, "the world's build is recorded as the restore's");

    // the position's history and world.restores say what happened
    const log = await taskLog("world_restore", restored.run.dag_run_id, "invalidate_position");
    assert.match(log, new RegExp(`replacing the world at world_position ${savedPosition + 2} by snapshot '${SAVED}'`));
    const [last] = await withRunnerDb((db) => readRestores(db, 1));
    assert.deepEqual(last && { s: last.snapshot, from: last.fromPosition, to: last.toPosition, run: last.runId }, { s: SAVED, from: String(savedPosition + 2), to: savedPosition, run: restored.run.dag_run_id });

    // the next step plays exactly day p again, and ODS holds it once
    const next = await runDag("world_next_day", { days: 1 }, 600);
    assert.equal(next.run.state, "success", describeRun(next));
    assert.equal(await readPositionText(), String(savedPosition + 1));
    const { seed, size } = await import("../../src/world/passport.ts").then((m) => m.loadPassport());
    const day = playedDay(seed, savedPosition, size);
    const ods = await withClickHouse((ch) => readOdsValidHitsPerDate(ch, [day.date]));
    assert.equal(ods.get(day.date), day.valid, `ODS holds day ${savedPosition} (${day.date}) exactly once`);
  });

  faultTest("restore-queued", "a restore queued behind a running step waits for it (waiting_for), then restores", async () => {
    const [pause] = await armRunnerPauses([{ dag: "world_next_day", task: "play_days", phase: "before" }], "snapshots: step holds the world");
    assert.ok(pause !== undefined);
    const step = await triggerRun("world_next_day", { days: 1 });
    await pauseReached(pause);
    const restore = await triggerRun("world_restore", { name: SAVED });
    let queued: DagRunResponse | undefined;
    for (let i = 0; i < 50; i++) {
      queued = await api.request<DagRunResponse>("GET", `api/v2/dags/world_restore/dagRuns/${encodeURIComponent(restore.dag_run_id)}`);
      if (queued.waiting_for) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(queued?.state, "queued");
    assert.equal(queued?.waiting_for, `world held by world_next_day/${step.dag_run_id}`);
    await releasePause(pause);
    const stepDone = await waitForRun("world_next_day", step.dag_run_id, 600);
    assert.equal(stepDone.state, "success");
    const restoreDone = await waitForRun("world_restore", restore.dag_run_id, 300);
    assert.equal(restoreDone.state, "success");
    assert.ok(Date.parse(restoreDone.start_date ?? "") >= Date.parse(stepDone.end_date ?? ""), "the restore started after the step ended");
    await assertWorldEquals(saved, "the world restored after the step");
  });

  faultTest("refusals", "refusals, each before the world is touched: unknown name, another schema, another layout, a disk without room, a name taken, a world not ready", async () => {
    const before = await readExactWorld(ctx.config);
    await assertRestoreRefused("t-nobody-saved-this", /no snapshot named 't-nobody-saved-this'.*there are: t-saved/, before);

    // another schema: the same files, a manifest whose DDL build is not sql/ddl/ today
    const folder = store.folder(SAVED);
    const other = store.folder("t-other-schema");
    cpSync(folder, other, { recursive: true });
    const manifest = JSON.parse(readFileSync(path.join(other, "manifest.json"), "utf8")) as { name: string; ddl: { file: string; checksum: string }[]; layout: { cluster: string } };
    manifest.name = "t-other-schema";
    const first = manifest.ddl[0];
    assert.ok(first);
    first.checksum = "0".repeat(64);
    writeFileSync(path.join(other, "manifest.json"), JSON.stringify(manifest));
    await assertRestoreRefused("t-other-schema", new RegExp(`another schema: its DDL differs from sql/ddl/ today in ${first.file.replace(/\./g, "\\.")} \\(changed\\)`), before);

    const layout = store.folder("t-other-layout");
    cpSync(folder, layout, { recursive: true });
    const m2 = JSON.parse(readFileSync(path.join(layout, "manifest.json"), "utf8")) as typeof manifest;
    m2.name = "t-other-layout";
    m2.layout.cluster = "elsewhere";
    writeFileSync(path.join(layout, "manifest.json"), JSON.stringify(m2));
    await assertRestoreRefused("t-other-layout", /another stand layout: cluster elsewhere \(now stand\)/, before);

    armFailPoint("free-bytes", String(1024 * 1024));
    try {
      await assertRestoreRefused(SAVED, /not enough disk for the restore of 't-saved'.*1\.0 MiB is free/, before);
      const save = await runDag("world_snapshot", { name: "t-no-room" }, 120);
      assert.equal(save.run.state, "failed");
      assert.match(await taskLog("world_snapshot", save.run.dag_run_id, "check_snapshot"), /not enough disk for the save of 't-no-room'/);
      assert.equal(existsSync(store.folder("t-no-room") + ".partial") || existsSync(store.folder("t-no-room")), false, "nothing written");
    } finally {
      rmSync(path.join(failPoints, "free-bytes"), { force: true });
    }
    const taken = await runDag("world_snapshot", { name: SAVED }, 120);
    assert.equal(taken.run.state, "failed");
    assert.match(await taskLog("world_snapshot", taken.run.dag_run_id, "check_snapshot"), /a snapshot named 't-saved' exists/);
    const bad = await api.request<unknown>("POST", "api/v2/dags/world_restore/dagRuns", { body: { logical_date: null, conf: { name: "../etc" } } }).then(
      () => "accepted",
      (err: unknown) => String(err),
    );
    assert.match(bad, /answered 4\d\d.*name/, "a name that is a path is refused at the trigger, naming the field");
    await assertWorldEquals(before, "the world after every refusal");
  });

  faultTest("restore-killed", "a restore killed half way (the runner SIGKILLed after ZooKeeper's files) leaves -1; the next restore of the same name converges", async () => {
    const step = await runDag("world_next_day", { days: 1 }, 600); // something to replace
    assert.equal(step.run.state, "success", describeRun(step));
    const pid = runnerPid(ctx);
    assert.ok(pid !== undefined);
    armFailPoint("kill-restore-after-zookeeper");
    const killed = await triggerRun("world_restore", { name: SAVED });
    await runnerGone(pid);
    assert.equal(await positionInPostgres(), "-1", "the world is marked unusable while the restore is cut short");
    // the takeover's retry fails at this fail point before its function: the next restore, not the
    // same run, must bring the world back (armed while the runner is dead, so by construction)
    await withRunnerDb((db) => db.query("insert into runner.fail_points (dag_id, task_id, phase, note) values ('world_restore', 'replace_world', 'before', 'snapshots: no takeover')"));
    await useRunnerService(); // the runner back (the keeper would do it on a user's stand)
    const ended = await waitForRun("world_restore", killed.dag_run_id, 300);
    assert.equal(ended.state, "failed");
    assert.equal(await positionInPostgres(), "-1");
    const refusedStep = await runDag("world_next_day", { days: 1 }, 120);
    assert.equal(refusedStep.run.state, "failed", "no step runs on a half-restored world");
    const again = await runDag("world_restore", { name: SAVED }, 300);
    assert.equal(again.run.state, "success", describeRun(again));
    await assertWorldEquals(saved, "the world after the repeated restore");
  });

  faultTest("save-killed", "a save killed half way: no restore takes the half-written snapshot, and the keeper brings back the services the dead runner held down", async () => {
    const before = await readExactWorld(ctx.config);
    const pid = runnerPid(ctx);
    assert.ok(pid !== undefined);
    armFailPoint("kill-save-after-clickhouse-ch1");
    await ensureKeeper(ctx); // on a user's stand it always runs; it restarts the dead runner too
    try {
      const killed = await triggerRun("world_snapshot", { name: "t-half" });
      await runnerGone(pid);
      // the runner is dead, so nothing has retried the save yet: the retry that the takeover will run
      // fails at this fail point before its function, so the half-written snapshot stays (by construction)
      await withRunnerDb((db) => db.query("insert into runner.fail_points (dag_id, task_id, phase, note) values ('world_snapshot', 'save_snapshot', 'before', 'snapshots: the half stays')"));
      assert.equal(existsSync(store.folder("t-half") + ".partial"), true, "a half-written snapshot is left");
      // ZooKeeper, the nodes and Kafka were held down by the runner; it is dead, so the keeper starts them
      const deadline = Date.now() + 120_000;
      for (const service of serviceGroups(ctx).flat()) {
        while (!(isProcessOurs(ctx.supervisor.readPid(service.name) ?? { pid: 0, marker: "", startedAt: "" }) && (await serves(ctx, service)))) {
          if (Date.now() > deadline) {
            const kept = readKeeperView(ctx).services.find((r) => r.service === service.name);
            assert.fail(`the keeper did not bring ${service.name} back within 120 s; the keeper says: ${kept ? `${kept.state}: ${kept.message}` : "no record"}`);
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      }
      await useRunnerService();
      const ended = await waitForRun("world_snapshot", killed.dag_run_id, 300);
      assert.equal(ended.state, "failed");
      const save = (await taskInstances("world_snapshot", killed.dag_run_id)).get("save_snapshot");
      assert.equal(save?.try_number, 2, "the killed try was taken over, and the retry stopped at the fail point");
      const listed = store.list().find((s) => s.name === "t-half");
      assert.equal(listed?.state, "partial");
      await assertRestoreRefused("t-half", /snapshot 't-half' is half-written: its save did not finish/, before);
    } finally {
      await withRunnerDb((db) => db.query("delete from runner.fail_points where note = 'snapshots: the half stays'"));
      await stopKeeper(ctx);
    }
  });

  faultTest("stand-restarted", "a snapshot survives the stand stopped and started, and restores", async () => {
    await stopRunner(ctx);
    await standDown(ctx);
    await standUp(ctx);
    await useRunnerService();
    const restored = await runDag("world_restore", { name: SAVED }, 300);
    assert.equal(restored.run.state, "success", describeRun(restored));
    await assertWorldEquals(saved, "the world restored after the stand stopped and started");
    const tasks = await taskInstances("world_restore", restored.run.dag_run_id);
    assert.equal(tasks.get("set_position")?.state, "success");
  });

  after(() => {
    // the other world suites' canonical world stays (testkit/stand/world-suite.ts)
    for (const s of store.list()) if (s.name !== CANONICAL_SNAPSHOT) store.remove(s.name);
  });
  faults.checkEveryPointHasATest();
});
