// The world guard (src/world-ops/guard.ts) on the stand the tests run on: a snapshot taken twice
// with nothing in between is equal; a message produced to a fresh topic is a difference it names
// (the red path, made without touching the world); configs that share a port are refused.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { loadStandConfig } from "../../src/config/stand.ts";
import { diffSnapshots, readConfigFile, sharedResources, takeWorldSnapshot } from "../../src/world-ops/guard.ts";
import { kafkaClient, randomName } from "../../testkit/stand/live-stand.ts";

describe("the world guard", () => {
  it("two snapshots with nothing between them are equal; a produced message is named", async () => {
    const config = loadStandConfig();
    const before = await takeWorldSnapshot(config);
    assert.deepEqual(diffSnapshots(before, await takeWorldSnapshot(config)), []);

    const topic = randomName("guard_probe");
    const kafka = kafkaClient("world-guard-test");
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      await producer.connect();
      await producer.send({ topic, messages: [{ value: "probe" }] });
      const diff = diffSnapshots(before, await takeWorldSnapshot(config));
      assert.deepEqual(diff, [`topicEnds ${topic}/0: absent -> 1`]);
    } finally {
      await producer.disconnect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  });

  it("a position or a row count that moved is named with both values", () => {
    const base = { position: "9", latestWorldRun: null, activeWorldRuns: 0, tables: { "ch1 ods.event": 10 }, topicEnds: {}, groupOffsets: {} };
    const after = { ...base, position: "10", tables: { "ch1 ods.event": 12, "ch1 ods.extra": 1 } };
    assert.deepEqual(diffSnapshots(base, after), ["world_position: 9 -> 10", "tables ch1 ods.event: 10 -> 12", "tables ch1 ods.extra: absent -> 1"]);
  });

  it("the test stand shares no port and no state directory with stand.yaml; a config with itself shares all", () => {
    const user = readConfigFile("stand.yaml");
    assert.deepEqual(sharedResources(user, readConfigFile("test/stand.test.yaml")), []);
    const self = sharedResources(user, user);
    assert.ok(self.includes(`port ${user.postgres.port}`) && self.some((s) => s.startsWith("state directory")), self.join(", "));
  });
});
