// The world's lifecycle on the real stand, in one ordered story that shares its two creations:
//   an interrupted cleanup (a live consumer holds clickstream_hits) leaves -1, and everything after
//   it refuses loudly; a cold make up from nothing reaches WORLD_STARTING_DAYS with the passport's
//   exact ODS; a repeated world_initialize / make up changes nothing and reports drift without
//   applying it; a lifecycle refusal names the account; the step DAGs work; make rebuild-storage
//   returns the canonical world.
// Each step asserts what it observed on the stand, not what a DAG's log claims.
// The two ends that each rebuild a world (the interrupted cleanup, make rebuild-storage) are the
// matrix WORLD_LIFECYCLE_ENDS: the gate runs one, drawn by TEST_SEED; make test-full both.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { connectClickHouse } from "../../src/clickhouse/client.ts";
import { apiBaseUrl } from "../../src/config/stand.ts";
import { layerCounts } from "../../src/world-ops/report.ts";
import type { SchemaStatus } from "../../src/world/schema-status.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC, ORDERS_CONSUMER_GROUP, ORDERS_TOPIC } from "../../src/world/constants.ts";
import { deleteConsumerGroups } from "../../tasks/consumer-groups.ts";
import { applyDdlFile } from "../../tasks/ddl.ts";
import { holdHitsGroup, type GroupHolder } from "../../testkit/world/group-holder.ts";
import {
  api,
  applicationDatabases,
  describeRun,
  emptyWorld,
  groupOffsets,
  latestRun,
  odsByDate,
  positionHistory,
  readPositionText,
  runDag,
  runUpCommand,
  setPositionText,
  stateOf,
  taskInstances,
  taskLog,
  topicId,
} from "../../testkit/world/rest-world.ts";
import { ddsAndDmDates, expectCanonicalOds, recordFakeDrift, runCli, worldSnapshot } from "../../testkit/world/world-checks.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { WORLD_LIFECYCLE_ENDS } from "../../testkit/matrices.ts";
import { sampledTests, sampleMatrix } from "../../testkit/matrix.ts";

const quiet = { signal: new AbortController().signal, log: () => undefined };

describe("the world's lifecycle on the stand", () => {
  let holder: GroupHolder | undefined;
  const world = useWorldSuite({ tearDown: async () => holder?.release() });
  const sample = sampleMatrix(WORLD_LIFECYCLE_ENDS);
  const cleanupDrawn = sample.points.includes("interrupted-cleanup");
  const ends = sampledTests(sample, it);

  ends.test("interrupted-cleanup", "an interrupted cleanup leaves -1: world_recreate is red while a live consumer holds clickstream_hits", async () => {
    await emptyWorld();
    holder = await holdHitsGroup();
    const finished = await runDag("world_recreate", {}, 120);
    assert.equal(finished.run.state, "failed", describeRun(finished));
    assert.equal(stateOf(finished, "invalidate_position"), "success");
    assert.equal(stateOf(finished, "drop_databases"), "success");
    assert.equal(stateOf(finished, "delete_consumer_groups"), "failed");
    assert.match(finished.tasks.get("delete_consumer_groups")?.error ?? "", new RegExp(`consumer group '${HITS_CONSUMER_GROUP}' is still held by 1 live consumer`));
    for (const id of ["delete_topics", "reset_position", "world_initialize"]) assert.equal(stateOf(finished, id), "upstream_failed", id);
    assert.equal(await readPositionText(), "-1", "the position stays -1 when the cleanup fails");
    const last = (await positionHistory()).at(-1);
    assert.equal(last?.new_value, "-1");
    assert.equal(last?.dag_id, "world_recreate");
    assert.equal(last?.dag_run_id, finished.run.dag_run_id);
  });

  ends.alsoTest("interrupted-cleanup", "world_initialize on -1 is red: cleanup unfinished, run make rebuild-storage", async () => {
    const finished = await runDag("world_initialize", {}, 60);
    assert.equal(finished.run.state, "failed");
    assert.match(finished.tasks.get("read_position")?.error ?? "", /world_position is -1: cleanup unfinished, run make rebuild-storage/);
    assert.equal(stateOf(finished, "create_topics"), "upstream_failed");
  });

  ends.alsoTest("interrupted-cleanup", "make up on -1 fails loudly, naming the failed task and the refusal", async () => {
    const result = await runUpCommand(["up"]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stderr, /world_initialize run make_up__\S+ FAILED/);
    assert.match(result.stderr, /task read_position failed/);
    assert.match(result.stderr, /world_position is -1: cleanup unfinished, run make rebuild-storage/);
    assert.match(result.stderr, /the world is NOT ready/);
    assert.equal(await readPositionText(), "-1");
  });

  it("a failed layer fails etl_pipeline (no databases: dds_transform is red, dm_transform never runs)", async () => {
    if (!cleanupDrawn) await emptyWorld(); // the interrupted cleanup, when drawn, left no databases
    const finished = await runDag("etl_pipeline", {}, 120);
    assert.equal(finished.run.state, "failed", describeRun(finished));
    assert.equal(stateOf(finished, "dds_transform"), "failed");
    assert.equal(stateOf(finished, "dm_transform"), "upstream_failed");
    const child = finished.tasks.get("dds_transform")?.child_dag_run_id;
    assert.ok(child);
    assert.equal((await taskInstances("dds_transform", child)).get("build_dds")?.state, "failed");
  });

  it("a cold make up creates the world from nothing: position 8, ODS exactly the passport, DDL recorded in the ledger", async () => {
    await holder?.release();
    holder = undefined;
    await deleteConsumerGroups(quiet);
    await setPositionText(null);
    assert.deepEqual(await applicationDatabases(), []);
    assert.equal(topicId(HITS_TOPIC.name), undefined, "no hits topic before the cold start");

    const result = await runUpCommand(["up"]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    console.log(`cold make up (stand already up): ${result.seconds.toFixed(1)} s`);
    assert.ok(result.seconds < 180, `cold make up took ${result.seconds} s`);
    assert.match(result.stdout, new RegExp(`world_position = ${world.passport.WORLD_STARTING_DAYS}`));
    assert.ok(result.stdout.includes(`web view: ${apiBaseUrl()}/ui`), result.stdout);
    assert.match(result.stdout, /schema: in sync/);

    assert.equal(await readPositionText(), String(world.passport.WORLD_STARTING_DAYS));
    await expectCanonicalOds(world.passport);
    const run = await latestRun("world_initialize", "make_up__");
    assert.equal(run.state, "success");
    const schema = await api.request<SchemaStatus>("GET", "api/v2/system/schema");
    assert.equal(schema.status, "in_sync");
    assert.equal(schema.build?.dag_run_id, run.dag_run_id);
    assert.ok(schema.files.every((f) => f.built_checksum === f.current_checksum && f.task_id?.startsWith("ddl_")));
  });

  it("lifecycle applied every DDL file without a refusal, and a statement outside its databases is refused naming the account", async () => {
    const run = await latestRun("world_initialize", "make_up__");
    const ddl = [...(await taskInstances("world_initialize", run.dag_run_id)).values()].filter((t) => t.task_id.startsWith("ddl_"));
    assert.ok(ddl.length > 0);
    for (const ti of ddl) {
      assert.equal(ti.state, "success", ti.task_id);
      assert.match(await taskLog("world_initialize", run.dag_run_id, ti.task_id), /as lifecycle on ch1/);
    }
    const dir = await mkdtemp(path.join(os.tmpdir(), "lifecycle-refusal-"));
    try {
      await writeFile(path.join(dir, "00-outside.sql"), "CREATE TABLE IF NOT EXISTS default.lifecycle_probe (x UInt8) ENGINE = Memory;\n");
      await assert.rejects(applyDdlFile({ ...quiet, file: "00-outside.sql", dir }), (err: Error) => {
        assert.match(err.message, /00-outside\.sql: statement 1/);
        assert.match(err.message, /Access denied to database default for user lifecycle/);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a ready position whose world is partly gone is drift: schema status names it, make up fails naming rebuild-storage", async () => {
    const built = await api.request<SchemaStatus>("GET", "api/v2/system/schema");
    assert.ok(built.catalogue.recorded_by_run, "world_initialize recorded the catalogue it built");
    assert.deepEqual(built.catalogue.missing, []);
    assert.deepEqual(built.catalogue.nodes_checked.sort(), ["ch1", "ch2"]);
    // a view (no data) dropped on one node behind the DAGs' back
    const ch2 = connectClickHouse({ node: "ch2", account: "admin" });
    try {
      await ch2.command("DROP TABLE ods.order_v");
    } finally {
      await ch2.close();
    }
    try {
      const status = await api.request<SchemaStatus>("GET", "api/v2/system/schema");
      assert.equal(status.status, "drift");
      assert.deepEqual(status.catalogue.missing, [{ kind: "missing_table", node: "ch2", name: "ods.order_v", detail: "table ods.order_v is missing on ch2" }]);
      const cli = await runCli(["schema", "status"]);
      assert.equal(cli.code, 1, cli.stdout);
      assert.match(cli.stdout, /table ods\.order_v is missing on ch2/);
      const up = await runUpCommand(["up"]);
      assert.notEqual(up.code, 0, up.stdout);
      assert.match(up.stdout + up.stderr, /world it describes is gone: table ods\.order_v is missing on ch2.*make rebuild-storage/s);
      assert.equal(await readPositionText(), String(world.passport.WORLD_STARTING_DAYS), "a refusal changes no position");
    } finally {
      await applyDdlFile({ ...quiet, file: "30-ods-views.sql" });
    }
    assert.deepEqual((await api.request<SchemaStatus>("GET", "api/v2/system/schema")).catalogue.missing, []);
  });

  it("a repeated world_initialize is fast and changes nothing; its log says the world exists", async () => {
    const before = await worldSnapshot();
    const finished = await runDag("world_initialize", {}, 60);
    assert.equal(finished.run.state, "success");
    assert.ok(finished.seconds < 5, `took ${finished.seconds} s`);
    assert.equal(stateOf(finished, "read_position"), "success");
    for (const [id, ti] of finished.tasks) if (id !== "read_position") assert.equal(ti.state, "skipped", id);
    const log = await taskLog("world_initialize", finished.run.dag_run_id, "read_position");
    assert.match(log, new RegExp(`world exists at position ${world.passport.WORLD_STARTING_DAYS}; nothing to do`));
    assert.deepEqual(await worldSnapshot(), before);
  });

  it("a repeated make up is fast, changes nothing, and reports drift without applying changed DDL", async () => {
    const before = await worldSnapshot();
    const fake = await recordFakeDrift();
    try {
      const result = await runUpCommand(["up"]);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      console.log(`repeated make up (without install): ${result.seconds.toFixed(1)} s`);
      assert.ok(result.seconds < 15, `repeated make up took ${result.seconds} s`);
      assert.match(result.stdout, /schema: DRIFT — 00-databases\.sql \(changed\)/);
      const run = await latestRun("world_initialize", "make_up__");
      assert.match(await taskLog("world_initialize", run.dag_run_id, "read_position"), /world exists at position 8; nothing to do/);
      const tasks = await taskInstances("world_initialize", run.dag_run_id);
      assert.ok([...tasks.values()].filter((t) => t.task_id.startsWith("ddl_")).every((t) => t.state === "skipped"), "no DDL applied");
      assert.deepEqual(await worldSnapshot(), { ...before, ledgerRows: before.ledgerRows + fake.rows });
      const cli = await runCli(["schema", "status"]);
      assert.equal(cli.code, 1, cli.stdout);
      assert.match(cli.stdout, /00-databases\.sql\s+changed/);
    } finally {
      await fake.remove();
    }
    assert.equal((await runCli(["schema", "status"])).code, 0);
  });

  it("world_next_day plays the next day: ODS, DDS and DM gain its date, the position is set to 9", async () => {
    const next = await runDag("world_next_day", { days: 1 }, 600);
    assert.equal(next.run.state, "success", describeRun(next));
    assert.equal(await readPositionText(), String(world.passport.WORLD_STARTING_DAYS + 1));
    const day8 = "2026-06-09";
    assert.ok((await odsByDate()).byDate[day8], "ODS has the new day");
    const { dds, dm } = await ddsAndDmDates();
    assert.ok(dds.includes(day8) && dm.includes(day8), `dds ${dds.join(",")}; dm ${dm.join(",")}`);
  });

  it("world_live_day plays the next day live (fast for the test) and sets the position to 10", async () => {
    const live = await runDag("world_live_day", { speed: 200_000 }, 600);
    assert.equal(live.run.state, "success", describeRun(live));
    assert.equal(await readPositionText(), String(world.passport.WORLD_STARTING_DAYS + 2));
    assert.ok((await odsByDate()).byDate["2026-06-10"], "ODS has the live day");
  });

  ends.test("rebuild-storage", "make rebuild-storage returns the canonical world: -1, 0, 8; new topics; offsets from zero; passport ODS; DDS and DM built", async () => {
    const oldTopics = [topicId(HITS_TOPIC.name), topicId(ORDERS_TOPIC.name)];
    const historyBefore = (await positionHistory()).length;
    const result = await runUpCommand(["rebuild-storage"]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    console.log(`make rebuild-storage: ${result.seconds.toFixed(1)} s`);

    const changes = (await positionHistory()).slice(historyBefore);
    assert.deepEqual(changes.map((c) => [c.new_value, c.dag_id]), [["-1", "world_recreate"], ["0", "world_recreate"], ["8", "world_initialize"]]);
    const newTopics = [topicId(HITS_TOPIC.name), topicId(ORDERS_TOPIC.name)];
    for (const [i, id] of newTopics.entries()) {
      assert.ok(id, "the topic exists again");
      assert.notEqual(id, oldTopics[i], "the topic was created anew");
    }
    // the readers started at offset 0 of the new topics and took exactly the new world's messages
    assert.deepEqual(await groupOffsets(HITS_CONSUMER_GROUP, HITS_TOPIC.name), { committed: world.passport.totals.events, end: world.passport.totals.events });
    const orders = await groupOffsets(ORDERS_CONSUMER_GROUP, ORDERS_TOPIC.name);
    assert.equal(orders.end, world.passport.snapshots.reduce((sum, s) => sum + s.orders, 0));
    assert.equal(orders.committed, orders.end);

    await expectCanonicalOds(world.passport);
    const { dds, dm } = await ddsAndDmDates();
    assert.deepEqual(dds, world.passport.dates);
    assert.deepEqual(dm, world.passport.dates);
    assert.ok((await layerCounts()).every((l) => l.rows > 0), "every layer holds rows");
  });
  ends.checkEveryPointHasATest();
});
