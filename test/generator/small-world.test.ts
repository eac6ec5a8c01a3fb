// The test stands' small world (WORLD_SIZES.small, docs/stand.md "The test world"): fewer people a
// day, every path of the chain still taken. Each assertion names a path a test on the small world
// relies on; a change to the draws that drops one fails here, not as a quiet gap on the stand.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Partitioners } from "kafkajs";
import { World, generateDay, planDay } from "../../generator/src/day.ts";
import { ORDER_CLASSES, orderClass } from "../../generator/src/order-fate.ts";
import { cohortSize } from "../../generator/src/people.ts";
import { DEFAULT_SEED, WORLD_SIZES, WORLD_STARTING_DAYS } from "../../generator/src/world.ts";
import { HITS_TOPIC } from "../../src/world/constants.ts";
import { readPassport } from "../../testkit/world/generator-fixtures.ts";

const small = new World(DEFAULT_SEED, "small");
const canonical = new World(DEFAULT_SEED);
const startingDays = Array.from({ length: WORLD_STARTING_DAYS }, (_, d) => d);
const purchases = startingDays.flatMap((d) => planDay(small, d).purchases);

describe("the small world", () => {
  it("has the canonical world's first people of each cohort, about WORLD_SIZES.small per-mille of them", () => {
    for (const day of startingDays) {
      const full = cohortSize(canonical.seed, day);
      const few = cohortSize(small.seed, day);
      assert.ok(few > 0 && few < full, `day ${day}: ${few} of ${full} newcomers`);
      assert.ok(Math.abs(few - (full * WORLD_SIZES.small) / 1000) <= 1, `day ${day}: ${few} newcomers, not ${WORLD_SIZES.small}‰ of ${full}`);
    }
    const passport = readPassport("small");
    const canonicalEvents = readPassport().totals.events;
    assert.equal(passport.size, "small");
    assert.ok(passport.totals.events < canonicalEvents / 5, `${passport.totals.events} hits is not a small world beside ${canonicalEvents}`);
  });

  it("plays every valid event type on every starting day, and every invalid kind", () => {
    const passport = readPassport("small");
    for (const day of passport.days) {
      for (const [type, n] of Object.entries(day.valid_by_type)) assert.ok(n > 0, `day ${day.day}: no ${type} hit`);
    }
    for (const [kind, n] of Object.entries(passport.totals.invalid_by_kind)) assert.ok(n > 0, `no invalid hit of kind ${kind} in the starting days`);
  });

  it("plants every reconciliation class, late orders (one and two snapshots), cancellations both ways and identity pairs", () => {
    const classes = new Set(purchases.map((p) => orderClass(p.fate ?? assert.fail(`order ${p.orderId} has no fate`))));
    assert.deepEqual([...classes].sort(), [...ORDER_CLASSES].sort());
    const lateness = new Set(purchases.map((p) => p.fate?.lateness));
    assert.deepEqual([...lateness].sort(), [0, 1, 2]);
    assert.deepEqual(new Set(purchases.map((p) => p.fate?.path)), new Set(["paid", "paid_then_cancelled", "unpaid_then_cancelled"]));
    assert.ok(purchases.some((p) => p.identityPair), "no buyer with two cookies (identity pair)");
    assert.ok(purchases.some((p) => (p.fate?.struckLine ?? -1) >= 0), "no order line struck by the backend");
  });

  it("reaches every partition of hits (so both ClickHouse shards) every starting day, as the generator's partitioner places them", () => {
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: HITS_TOPIC.partitions }, (_, partitionId) => ({ partitionId, leader: 1, partitionErrorCode: 0, replicas: [1], isr: [1] }));
    for (const day of startingDays) {
      const hits = generateDay(small, day);
      const reached = new Set(hits.keys.map((key) => partitioner({ topic: HITS_TOPIC.name, partitionMetadata, message: { key, value: null } })));
      assert.equal(reached.size, HITS_TOPIC.partitions, `day ${day} reaches partitions ${[...reached].join(", ")} only`);
    }
  });
});
