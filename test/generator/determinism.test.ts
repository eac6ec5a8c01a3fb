// Same seed, same bytes; another seed, other bytes; a day does not depend on the days before it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { World, generateDay } from "../../generator/src/day.ts";
import { linesSha256 } from "../../generator/src/inventory.ts";
import { PlanCache, buildSnapshot } from "../../generator/src/orders.ts";
import { Rng, permute52 } from "../../generator/src/rng.ts";
import { DEFAULT_SEED } from "../../generator/src/world.ts";
import { startingWorld } from "../../testkit/world/generator-fixtures.ts";

describe("generator determinism", () => {
  it("gives the same bytes for the same seed in two independent worlds", () => {
    for (const day of [0, 5]) {
      const a = generateDay(new World(DEFAULT_SEED), day);
      const b = generateDay(new World(DEFAULT_SEED), day);
      assert.equal(linesSha256(a.lines), linesSha256(b.lines), `day ${day}`);
      assert.deepEqual(a.keys, b.keys);
    }
  });

  it("gives different bytes, ids and counts for another seed", () => {
    const a = generateDay(new World(DEFAULT_SEED), 2);
    const b = generateDay(new World(DEFAULT_SEED + 1), 2);
    assert.notEqual(linesSha256(a.lines), linesSha256(b.lines));
    assert.notEqual(a.keys[0], b.keys[0]);
  });

  it("generates day 3 alone exactly as after other days in the same world", () => {
    const alone = generateDay(new World(DEFAULT_SEED), 3);
    const world = new World(DEFAULT_SEED);
    for (const day of [0, 2]) generateDay(world, day);
    const inBatch = generateDay(world, 3);
    assert.equal(alone.lines.length, inBatch.lines.length);
    assert.equal(linesSha256(alone.lines), linesSha256(inBatch.lines));
  });

  it("builds a snapshot alone exactly as after other snapshots", () => {
    const world = new World(DEFAULT_SEED);
    const warmed = new PlanCache(world);
    for (let d = 0; d < 5; d++) buildSnapshot(warmed, d);
    const alone = buildSnapshot(new PlanCache(new World(DEFAULT_SEED)), 5);
    assert.deepEqual(buildSnapshot(warmed, 5).lines, alone.lines);
  });

  it("keeps WatchIDs unique within and across the starting days walked (startingDayNumbers), and never 0 on valid hits", () => {
    const seen = new Set<number>();
    for (const day of startingWorld()) {
      for (const line of day.lines) {
        const watch = Number(/"WatchID":(\d+)/.exec(line)?.[1]);
        if (watch === 0) continue; // a missing_id hit
        assert.ok(!seen.has(watch), `duplicate WatchID ${watch} on day ${day.day}`);
        seen.add(watch);
      }
    }
  });

  it("addresses streams by position: equal addresses, equal draws; a bijective id permutation", () => {
    const a = new Rng([1, 2, 3]);
    const b = new Rng([1, 2, 3]);
    const c = new Rng([1, 2, 4]);
    const drawsA = Array.from({ length: 8 }, () => a.nextU32());
    assert.deepEqual(drawsA, Array.from({ length: 8 }, () => b.nextU32()));
    assert.notDeepEqual(drawsA, Array.from({ length: 8 }, () => c.nextU32()));
    const images = new Set(Array.from({ length: 10_000 }, (_, i) => permute52(i, 42)));
    assert.equal(images.size, 10_000);
    for (const v of images) assert.ok(v >= 0 && v < 2 ** 52);
  });
});
