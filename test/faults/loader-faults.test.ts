// Faults at the loader while world_next_day plays a day, on the test stand (never the user's):
// poison messages produced into hits in the middle of the day, a ClickHouse node frozen (SIGSTOP)
// while the loader inserts, the loader service SIGKILLed mid-batch and started again as `stand up`
// would, the loader SIGSTOPped past its Kafka session timeout and resumed, ClickHouse ch1 killed
// and started again. Each asserts the run's outcome, the position, that the group committed every message of
// hits and never went backwards, and that the day is in ODS exactly once: ODS read merged equals its
// distinct WatchIDs and ods.event_v, equals the generator's valid hits of the date, and together with
// the day's error rows accounts for every message of the day that is not a poison. stg may hold a
// replayed message twice (at-least-once); ODS may not. The five faults are a matrix: make test runs
// the ones its seed draws (testkit/matrices.ts), make test-full all five.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Producer } from "kafkajs";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { ensureLoader, loaderHealth, loaderPid } from "../../src/services/loader-service.ts";
import { serviceGroups, standContext, standUp } from "../../src/stand/stand.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC } from "../../src/world/constants.ts";
import {
  deadLettersIn,
  loaderMetricsText,
  metricValue,
  show,
  stgOffsetsIn,
  groupStable,
  releaseAllLoaderPauses,
  type LoaderPause,
  total,
  waitForLoaderConsuming,
  type OffsetSample,
} from "../../testkit/world/loader-day.ts";
import { kafkaClient } from "../../testkit/stand/live-stand.ts";
import { taskLog } from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { playDay } from "../../testkit/world/faulted-day.ts";
import { sampledTests, sampleMatrix } from "../../testkit/matrix.ts";
import { LOADER_FAULT_KINDS } from "../../testkit/matrices.ts";

/** make test runs the faults the seed draws (testkit/matrices.ts); make test-full all five. */
const faults = sampledTests(sampleMatrix(LOADER_FAULT_KINDS), it);
const faultTest = faults.test;

const quiet = (): undefined => undefined;
const ctx = standContext(quiet);
const loaderOptions = compileLoaderConfig(ctx.config.loader.options ?? {});

describe("the loader under faults during world_next_day (test stand)", () => {
  useWorldSuite({
    wholeWorld: true,
    setUp: async () => {
      // what an earlier test process that died mid-test left armed would hold this file's days
      const left = await releaseAllLoaderPauses(ctx.config);
      if (left > 0) console.log(`released ${left} loader pause points an earlier test left armed`);
    },
    tearDown: async () => {
      await standUp(ctx); // a loader or node a test left down is started again
      await ensureLoader(ctx);
      await waitForLoaderConsuming(ctx.config);
    },
  });

  faultTest("poison", "poison messages in the middle of a day, the 50,000-deep object among them: each is a dead letter once, with its offset and reason; no node dies; the day lands whole", async () => {
    const poisons = [
      { reason: "not_json", partition: 0, key: "poison-not-json", value: Buffer.from('this is not JSON {"WatchID": 1') },
      { reason: "invalid_utf8", partition: 1, key: "poison-invalid-utf8", value: Buffer.concat([Buffer.from('{"WatchID": "'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')]) },
      { reason: "not_object", partition: 0, key: "poison-array", value: Buffer.from('[{"WatchID": 1}, 2, 3]') },
      { reason: "too_large", partition: 1, key: "poison-5mb", value: Buffer.from(`{"pad": "${"x".repeat(5 * 1024 * 1024 - 11)}"}`) },
      // valid JSON, 300 KB, 50,000 levels deep: ClickHouse 18.16 dies skipping it (docs/loader.md)
      { reason: "too_deep", partition: 0, key: "poison-deep", value: Buffer.from(`${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`) },
    ];
    const nodes = ctx.config.clickhouse.nodes.map((n) => `clickhouse-${n.name}`);
    const nodePids = (): (number | undefined)[] => nodes.map((name) => ctx.supervisor.runningPid(name));
    const nodesBefore = nodePids();
    assert.equal(poisons[3]?.value.length, 5 * 1024 * 1024);
    const producer: Producer = kafkaClient("loader-faults-poisons").producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const pidBefore = loaderPid(ctx);
    const metricsBefore = await loaderMetricsText(ctx.config);
    const offsets: number[] = [];
    let heldAt: LoaderPause | undefined;
    try {
      // the loader holds the day's first cycle before its INSERT: the poisons go in while the day is
      // read and not yet placed
      const day = await playDay(ctx.config, "poisons", poisons.length, "before_insert", async ({ pause }) => {
        heldAt = await pause.reached();
        for (const p of poisons) {
          const [meta] = await producer.send({ topic: HITS_TOPIC.name, acks: -1, messages: [{ partition: p.partition, key: p.key, value: p.value }] });
          assert.ok(meta && meta.partition === p.partition, `the producer answered for partition ${p.partition}`);
          offsets.push(Number(meta.baseOffset));
        }
        await pause.release();
      });
      const where = poisons.map((p, i) => `${p.reason} p${p.partition}@${offsets[i]} of [${day.ranges[p.partition]?.from}, ${day.ranges[p.partition]?.to})`);
      console.log(`poisons produced while the loader held the day's first cycle (${heldAt?.detail ?? "?"}): ${where.join(", ")}`);

      const expected = poisons
        .map((p, i) => ({
          partition: p.partition,
          offset_text: String(offsets[i]),
          key: p.key,
          reason: p.reason,
          raw_bytes: p.value.length,
          raw_length: String(Math.min(p.value.length, loaderOptions.rawCapBytes)),
          raw_md5: createHash("md5").update(p.value.subarray(0, loaderOptions.rawCapBytes)).digest("hex").toUpperCase(),
          error_code: null,
          target_table: "",
        }))
        .sort((a, b) => a.partition - b.partition || Number(a.offset_text) - Number(b.offset_text));
      assert.deepEqual(await deadLettersIn(day.ranges), expected, "each poison is a dead letter exactly once, where the producer put it, with its reason and its raw bytes (capped)");

      assert.equal(loaderPid(ctx), pidBefore, "the same loader process counted them");
      assert.deepEqual(nodePids(), nodesBefore, `no ClickHouse node died or was restarted (${nodes.join(", ")})`);
      const metricsAfter = await loaderMetricsText(ctx.config);
      for (const reason of ["not_json", "invalid_utf8", "not_object", "too_large", "too_deep"]) {
        const counted = metricValue(metricsAfter, "loader_dead_letters_total", { reason }) - metricValue(metricsBefore, "loader_dead_letters_total", { reason });
        assert.equal(counted, 1, `loader_dead_letters_total{reason="${reason}"} counted its poison once`);
      }
    } finally {
      await producer.disconnect();
    }
  });

  faultTest("clickhouse-frozen", "ClickHouse ch2 frozen (SIGSTOP) 17 s while the loader inserts the day: success once it resumes, nothing lost or doubled", async () => {
    const node = ctx.config.clickhouse.nodes[1]?.name ?? "ch2";
    let held: OffsetSample | undefined;
    let lagWhileFrozen = Number.NaN;
    await playDay(ctx.config, `SIGSTOP ${node}`, 0, "before_insert", async ({ pause, watch }) => {
      // the day's first cycle waits before its INSERT; the node freezes, then the cycle goes on into it
      await pause.reached();
      const pid = ctx.supervisor.runningPid(`clickhouse-${node}`);
      assert.ok(pid !== undefined, `clickhouse-${node} runs (pid file under ${ctx.paths.root})`);
      process.kill(pid, "SIGSTOP");
      const frozenAt = Date.now();
      try {
        await pause.release();
        await sleep(17_000);
        held = watch.latest();
        lagWhileFrozen = metricValue(await loaderMetricsText(ctx.config), "loader_consumer_lag", { topic: HITS_TOPIC.name });
      } finally {
        process.kill(pid, "SIGCONT");
        console.log(`${node} frozen ${((Date.now() - frozenAt) / 1000).toFixed(1)} s`);
      }
    });
    assert.ok(held !== undefined && total(held.committed) < total(held.ends), `the freeze held the loader: committed ${show(held?.committed ?? new Map())} of ${show(held?.ends ?? new Map())}`);
    assert.ok(lagWhileFrozen > 0, `/metrics showed the lag while ${node} was frozen: loader_consumer_lag ${lagWhileFrozen}`);
  });

  faultTest("loader-sigkill", "the loader SIGKILLed mid-batch and started again: the run waits it out, commits never go back, the day lands once", async () => {
    const pidBefore = loaderPid(ctx);
    assert.ok(pidBefore !== undefined, "the loader service runs");
    let atKill: OffsetSample | undefined;
    let uncommittedAtKill = 0;
    try {
      let runId = "";
      // the day's first cycle waits after its INSERTs returned and before its commit: killed there,
      // the loader leaves rows in stg above the committed offset, which the next process must replay
      const day = await playDay(ctx.config, "SIGKILL loader", 0, "before_commit", async ({ pause, watch, runId: id }) => {
        runId = id;
        const held = await pause.reached();
        console.log(`loader held before its commit: ${held.detail ?? "?"}`);
        process.kill(pidBefore, "SIGKILL");
        const killedAt = Date.now();
        atKill = await watch.until("a sample after the kill", (s) => s.at > killedAt, 10_000);
        const above = [...atKill.committed].map(([partition, from]) => ({ partition, from, to: Number.MAX_SAFE_INTEGER }));
        uncommittedAtKill = await stgOffsetsIn(above);
        await ensureLoader(ctx); // what `stand up` does for a loader that is not running
        console.log(
          `loader killed at committed ${show(atKill.committed)} of ends ${show(atKill.ends)}, ${uncommittedAtKill} messages in stg above it; ` +
            `started again as pid ${loaderPid(ctx)} after ${((Date.now() - killedAt) / 1000).toFixed(1)} s`,
        );
      });
      // what the step's wait said about the loader while the new process rejoined its groups
      const said = (await taskLog("world_next_day", runId, "wait_for_hits")).split("\n").filter((l) => l.includes("loader pid"));
      console.log(`wait_for_hits while the loader restarted:\n  ${said.join("\n  ")}`);
      assert.ok(atKill !== undefined);
      assert.notEqual(loaderPid(ctx), pidBefore, "a new loader process finished the day");
      assert.ok(total(atKill.committed) < total(day.watch.latest().ends), "the kill left part of the day to the restarted loader");
      // what the killed loader had committed was placed: every offset below it is in stg
      const committedRanges = day.ranges.map((r) => ({ ...r, to: atKill?.committed.get(r.partition) ?? r.from }));
      assert.equal(await stgOffsetsIn(committedRanges), total(atKill.committed) - day.ranges.reduce((n, r) => n + r.from, 0), "the killed loader committed only what it had placed");
      // what it had inserted but not committed was read again from the committed offset and inserted again
      assert.ok(uncommittedAtKill > 0, "the killed loader had inserted rows it never committed (it was held before its commit)");
      assert.ok(day.landing.stgRows - day.landing.stgOffsets >= uncommittedAtKill, `stg holds the replays (at-least-once): ${day.landing.stgRows - day.landing.stgOffsets} ≥ ${uncommittedAtKill}`);
    } finally {
      await ensureLoader(ctx);
      await waitForLoaderConsuming(ctx.config);
    }
  });

  faultTest("clickhouse-killed", "ClickHouse ch1 killed (SIGKILL) and kept down 10 s while the loader inserts the day, then started: inserts refused, commits held, the day lands once", async () => {
    const node = ctx.config.clickhouse.nodes[0]?.name ?? "ch1";
    const service = serviceGroups(ctx).flat().find((s) => s.name === `clickhouse-${node}`);
    assert.ok(service, `the stand has a service clickhouse-${node}`);
    const pid = loaderPid(ctx);
    const failuresBefore = metricValue(await loaderMetricsText(ctx.config), "loader_insert_failures_total");
    let failuresDuring = Number.NaN;
    let sinkDownSeen = 0;
    let degradedSaid = "";
    let atStop: OffsetSample | undefined;
    let beforeStart: OffsetSample | undefined;
    await playDay(ctx.config, `${node} killed`, 0, "before_insert", async ({ pause, watch }) => {
      // the day's first cycle waits before its INSERT; the node dies, then the cycle goes on into it
      await pause.reached();
      const stoppedAt = Date.now();
      assert.notEqual(await ctx.supervisor.stop(service.name, "SIGKILL", service.stopGraceMs), "not-running");
      atStop = watch.latest();
      const downAt = Date.now();
      try {
        await pause.release();
        while (Date.now() - downAt < 10_000) {
          await sleep(1000);
          const text = await loaderMetricsText(ctx.config);
          failuresDuring = metricValue(text, "loader_insert_failures_total");
          sinkDownSeen = Math.max(sinkDownSeen, metricValue(text, "loader_sink_down"));
          const health = await loaderHealth(ctx.config);
          if (health.problems.length > 0) degradedSaid = health.problems.join("; ");
        }
        beforeStart = watch.latest();
      } finally {
        await standUp(ctx);
        console.log(`${node} killed in ${((downAt - stoppedAt) / 1000).toFixed(1)} s, then down ${((Date.now() - downAt) / 1000).toFixed(1)} s; insert failures ${failuresDuring - failuresBefore}, loader_sink_down seen ${sinkDownSeen}`);
      }
    });
    assert.ok(failuresDuring > failuresBefore, `the loader counted refused inserts while ${node} was down (loader_insert_failures_total ${failuresBefore} → ${failuresDuring})`);
    assert.ok(atStop !== undefined && beforeStart !== undefined);
    assert.ok(total(beforeStart.committed) < total(beforeStart.ends), `commits were held while ${node} was down: committed ${show(beforeStart.committed)} of ${show(beforeStart.ends)}`);
    assert.equal(loaderPid(ctx), pid, "the same loader process carried on");
    assert.match(degradedSaid, /sink DOWN|held/, `the loader's /health said degraded while ${node} was down, naming why (it said: ${degradedSaid || "nothing"})`);
  });

  faultTest("loader-frozen", "the loader frozen (SIGSTOP) past its session timeout mid-batch, then resumed: the same process rejoins and the day lands once", async () => {
    const pid = loaderPid(ctx);
    assert.ok(pid !== undefined, "the loader service runs");
    const freezeMs = 15_000; // the loader's Kafka session timeout is 10 s: the broker drops it from both groups
    let atFreeze: OffsetSample | undefined;
    let duringFreeze: OffsetSample | undefined;
    // frozen while its first cycle of the day waits before its commit: the rows are in stg, the
    // offsets not committed, and the broker drops the member while it sleeps
    const day = await playDay(ctx.config, "SIGSTOP loader", 0, "before_commit", async ({ pause, watch }) => {
      await pause.reached();
      process.kill(pid, "SIGSTOP");
      const frozenAt = Date.now();
      try {
        atFreeze = await watch.until("a sample after the freeze", (s) => s.at > frozenAt + 500, 10_000);
        await sleep(freezeMs);
        duringFreeze = watch.latest();
      } finally {
        process.kill(pid, "SIGCONT");
        console.log(`loader frozen ${((Date.now() - frozenAt) / 1000).toFixed(1)} s at committed ${show(atFreeze?.committed ?? new Map())}`);
      }
      // the resumed loader rejoins (a new generation) while its cycle still holds rows read before;
      // released only then, that cycle must not commit them: the group restarts its partitions from
      // the offsets it had at the join, and a commit now would be followed by lower ones
      await groupStable(HITS_CONSUMER_GROUP);
      await pause.release();
    });
    assert.ok(atFreeze !== undefined && duringFreeze !== undefined);
    assert.deepEqual(duringFreeze.committed, atFreeze.committed, "nothing was committed while the loader was frozen");
    assert.ok(total(atFreeze.committed) < total(day.watch.latest().ends), "the freeze left part of the day to the resumed loader");
    assert.equal(loaderPid(ctx), pid, "the same loader process finished the day (it was resumed, not restarted)");
    await waitForLoaderConsuming(ctx.config);
  });
  faults.checkEveryPointHasATest();
});
