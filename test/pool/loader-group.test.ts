// A group of two loaders on the test stand (loader.instances 2: testkit/stand/derived-stand.ts writes the
// test stand's config with it raised; the second loader is the service loader-2, port + 1). Kafka
// splits hits' two partitions between them, and every fault here must leave the day exactly once in
// ODS (testkit/world/faulted-day.ts: success, position + 1, the group at the end offsets and never
// backwards, ODS merged = distinct WatchIDs = the generator's valid hits):
//   - kill -9 of the loader holding its cycle's rows inserted but not committed: the other takes its
//     partition within the session timeout and places the day; the keeper starts the killed one
//     again and it rejoins;
//   - while one loader holds the day's first cycle unplaced, the other removed (SIGTERM) and added
//     back: two rebalances under a held cycle lose and double nothing.
// Each moment is a loader pause point (src/loader/pause-points.ts), never a timing window.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { AssignerProtocol } from "kafkajs";
import { ensureKeeper, readKeeperView, stopKeeper } from "../../src/keeper/keeper-service.ts";
import { ensureLoader, ensureLoaders, loaderPid, stopLoader } from "../../src/services/loader-service.ts";
import { standContext, standStatus } from "../../src/stand/stand.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC } from "../../src/world/constants.ts";
import { LOADER_CONSUMER_SETTINGS } from "../../src/loader/world-loader.ts";
import { poolStandContext } from "../../testkit/stand/derived-stand.ts";
import { playDay } from "../../testkit/world/faulted-day.ts";
import { kafkaClient } from "../../testkit/stand/live-stand.ts";
import { armLoaderPause, releaseAllLoaderPauses, waitForLoaderConsuming } from "../../testkit/world/loader-day.ts";
import { sampledTests, sampleMatrix } from "../../testkit/matrix.ts";
import { LOADER_GROUP_FAULTS } from "../../testkit/matrices.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";

const quiet = (): undefined => undefined;
const ctx = standContext(quiet);
const pool = poolStandContext({ loader: 2 }, quiet);
const SECOND = { instance: 2 };

/** Which member (by Kafka client id: stand-loader, stand-loader-2) holds which partitions of hits. */
async function hitsAssignment(): Promise<Map<string, number[]>> {
  const admin = kafkaClient("loader-group-test").admin();
  await admin.connect();
  try {
    const [group] = (await admin.describeGroups([HITS_CONSUMER_GROUP])).groups;
    if (group?.state !== "Stable") return new Map();
    return new Map(
      group.members.map((m) => [m.clientId, [...(AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[HITS_TOPIC.name] ?? [])].sort()]),
    );
  } finally {
    await admin.disconnect();
  }
}

const showAssignment = (a: Map<string, number[]>): string => (a.size === 0 ? "(rebalancing)" : [...a].map(([id, ps]) => `${id} [${ps.join(",")}]`).join(", "));

/** Polls the group until `wanted` holds; returns how long that took. */
async function untilAssigned(what: string, wanted: (a: Map<string, number[]>) => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  let seen = new Map<string, number[]>();
  for (;;) {
    seen = await hitsAssignment();
    if (wanted(seen)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s; the group of ${HITS_CONSUMER_GROUP} is ${showAssignment(seen)}`);
    await sleep(100);
  }
}

const bothSplit = (a: Map<string, number[]>): boolean => a.size === 2 && (a.get("stand-loader")?.length ?? 0) === 1 && (a.get("stand-loader-2")?.length ?? 0) === 1;

async function twoLoadersConsuming(): Promise<void> {
  await ensureLoader(ctx);
  await ensureLoader(pool, SECOND);
  await waitForLoaderConsuming(pool.config, 120_000, 1);
  await waitForLoaderConsuming(pool.config, 120_000, 2);
  await untilAssigned("both loaders in the group, a partition of hits each", bothSplit, 60_000);
}

describe("a group of two loaders under kill -9 and rebalances while a day streams in (test stand)", () => {
  // each fault is a point of loader-group.fault: make test runs the ones the seed draws, make test-full both
  const faults = sampledTests(sampleMatrix(LOADER_GROUP_FAULTS), it);
  const faultTest = faults.test;
  useWorldSuite({
    wholeWorld: true,
    setUp: async () => {
      await releaseAllLoaderPauses(ctx.config);
    },
    tearDown: async () => {
      await stopKeeper(pool);
      await stopLoader(pool, SECOND); // the test stand runs one loader again
      await ensureLoader(ctx);
      await waitForLoaderConsuming(ctx.config);
    },
  });

  before(async () => {
    await twoLoadersConsuming();
  });

  after(async () => {
    await releaseAllLoaderPauses(pool.config, 2).catch(() => 0);
  });

  faultTest("kill-uncommitted", "kill -9 of one loader with its rows inserted and not committed: the other takes its partition within the session timeout, the day lands once, the keeper brings it back", async () => {
    await stopKeeper(pool); // the move to the other is seen first; the keeper is started after it
    let killed: number | undefined;
    let movedMs = Number.NaN;
    await playDay(
      pool.config,
      "kill -9 loader-2",
      0,
      "before_commit",
      async ({ pause }) => {
        await pause.reached(); // loader-2's cycle inserted its rows; the commit of their offsets is not sent
        killed = loaderPid(pool, SECOND);
        assert.ok(killed !== undefined, "loader-2 runs");
        process.kill(killed, "SIGKILL");
        movedMs = await untilAssigned(
          "loader-2's partition moved to loader",
          (a) => a.size === 1 && a.get("stand-loader")?.length === HITS_TOPIC.partitions,
          LOADER_CONSUMER_SETTINGS.sessionTimeout + 60_000,
        );
      },
      2,
    );
    console.log(`loader-2 killed: its partition was loader's after ${(movedMs / 1000).toFixed(1)} s (session timeout ${LOADER_CONSUMER_SETTINGS.sessionTimeout / 1000} s)`);
    // the session timeout, then one rebalance (the survivor rejoins at its next heartbeat, every 2 s; a few, on a loaded machine)
    assert.ok(movedMs <= LOADER_CONSUMER_SETTINGS.sessionTimeout + 5 * LOADER_CONSUMER_SETTINGS.heartbeatInterval, `moved within the session timeout and a rebalance: ${movedMs} ms`);

    await ensureKeeper(pool); // nothing typed for loader-2: the keeper finds it wanted up and dead
    const deadline = Date.now() + 120_000;
    for (;;) {
      const pid = loaderPid(pool, SECOND);
      if (pid !== undefined && pid !== killed) break;
      if (Date.now() > deadline) {
        const kept = readKeeperView(pool).services.find((s) => s.service === "loader-2");
        assert.fail(`the keeper did not start loader-2 again within 120 s; it says: ${kept ? `${kept.state}: ${kept.message}` : "no record"}`);
      }
      await sleep(250);
    }
    await waitForLoaderConsuming(pool.config, 120_000, 2);
    await untilAssigned("loader-2 back in the group with a partition", bothSplit, 60_000);
    await stopKeeper(pool);
  });

  faultTest("remove-add", "while one loader holds the day's first cycle unplaced, the other removed and added back: the day lands once", async () => {
    await twoLoadersConsuming();
    // armed before the day, as playDay arms loader's: nothing is left to place (the last test ended
    // with the group at the end offsets), so the first cycle of hits to reach it is the day's
    const second = await armLoaderPause(pool.config, "before_insert", HITS_TOPIC.name, 2);
    try {
      await playDay(
        pool.config,
        "loader-2 removed, then added back",
        0,
        "before_insert",
        async ({ pause }) => {
          await pause.reached(); // loader holds the day's first cycle of its partition
          await second.reached(); // and loader-2 one of its own
          // removed: SIGTERM releases its pause, flushes what it read, commits and leaves the group
          assert.equal(await stopLoader(pool, SECOND), "stopped");
          await untilAssigned("loader alone with both partitions", (a) => a.size === 1 && a.get("stand-loader")?.length === HITS_TOPIC.partitions, 60_000);
          // added while loader still holds the day's first cycle, unplaced. loader cannot rejoin
          // until that cycle ends (its revocation of the first rebalance waits for it), so the
          // group may drop it meanwhile: the split is looked for after the release
          await ensureLoader(pool, SECOND);
          await pause.release(); // the held cycle goes on into a group that changed twice under it
          await untilAssigned("loader-2 added back, a partition each", bothSplit, 90_000);
        },
        1,
      );
    } finally {
      await second.release().catch(() => undefined); // released by its stop already, unless the test failed first
    }
  });

  it("check-services has a line per loader; with the group made smaller, stand up stops the loader left over", async () => {
    await twoLoadersConsuming();
    const { services } = await standStatus(pool);
    assert.deepEqual(
      services.filter((s) => s.name.startsWith("loader")).map((s) => [s.name, s.port, s.healthy, s.detail.includes("state consuming")]),
      [["loader", pool.config.loader.port, true, true], ["loader-2", pool.config.loader.port + 1, true, true]],
    );
    const printed: string[] = [];
    const first = loaderPid(ctx);
    await ensureLoaders({ ...ctx, print: (line) => printed.push(line) }); // the test stand's config: loader.instances 1
    assert.equal(loaderPid(pool, SECOND), undefined, "loader-2 stopped");
    assert.ok(printed.includes("loader-2: loader.instances is 1 now; stopping it"), printed.join(" | "));
    assert.equal(loaderPid(ctx), first, "the first loader left running");
    await untilAssigned("the first loader alone with both partitions", (a) => a.size === 1 && a.get("stand-loader")?.length === HITS_TOPIC.partitions, 60_000);
  });
  faults.checkEveryPointHasATest();
});
