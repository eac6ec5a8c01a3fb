// The offset tracker under many random interleavings: a committed offset never passes an offset
// handed out and not placed, commits only move forward, and everything placed commits to the end.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { OffsetOrderError, OffsetTracker } from "../../src/loader/offsets.ts";
import { randomInt, seededRandom } from "../../testkit/loader-support.ts";

const topic = "t";

describe("OffsetTracker", () => {
  test("commits the lowest unplaced offset, then one past the last when all are placed", () => {
    const tracker = new OffsetTracker();
    const tp = { topic, partition: 0 };
    for (const offset of [5n, 6n, 9n, 10n]) tracker.handOut(tp, offset); // gaps: compaction, markers
    assert.equal(tracker.safeOffset(tp), 5n);
    tracker.markPlaced(tp, 6n);
    tracker.markPlaced(tp, 10n);
    assert.equal(tracker.safeOffset(tp), 5n);
    tracker.markPlaced(tp, 5n);
    assert.equal(tracker.safeOffset(tp), 9n);
    tracker.markPlaced(tp, 9n);
    assert.equal(tracker.safeOffset(tp), 11n);
    assert.deepEqual(tracker.pendingCommits(), [{ topic, partition: 0, offset: 11n }]);
    tracker.markCommitted(tracker.pendingCommits());
    assert.deepEqual(tracker.pendingCommits(), []);
  });

  test("refuses offsets that go backwards on a partition", () => {
    const tracker = new OffsetTracker();
    tracker.handOut({ topic, partition: 0 }, 3n);
    assert.throws(() => tracker.handOut({ topic, partition: 0 }, 2n), OffsetOrderError);
  });

  test("a revoked partition is forgotten and starts afresh", () => {
    const tracker = new OffsetTracker();
    const tp = { topic, partition: 1 };
    tracker.handOut(tp, 7n);
    tracker.revoke([tp]);
    assert.equal(tracker.safeOffset(tp), undefined);
    tracker.markPlaced(tp, 7n); // a late result of the revoked lease: ignored
    assert.equal(tracker.unplacedCount(), 0);
    tracker.handOut(tp, 4n); // the next lease starts from the committed offset
    assert.equal(tracker.safeOffset(tp), 4n);
  });

  test("property: 500 random interleavings never commit past an unplaced offset", () => {
    for (let seed = 1; seed <= 500; seed++) {
      const random = seededRandom(seed);
      const tracker = new OffsetTracker();
      const partitions = 1 + randomInt(random, 3);
      const next = Array.from({ length: partitions }, () => BigInt(randomInt(random, 100)));
      const outstanding: { partition: number; offset: bigint }[] = [];
      const placed = Array.from({ length: partitions }, () => new Set<bigint>());
      const handedOut = Array.from({ length: partitions }, () => [] as bigint[]);
      const committed = Array.from({ length: partitions }, () => -1n);
      for (let step = 0; step < 300; step++) {
        const action = random();
        if (action < 0.45) {
          const p = randomInt(random, partitions);
          const offset = (next[p] ?? 0n) + BigInt(randomInt(random, 3)); // gaps of 0–2
          tracker.handOut({ topic, partition: p }, offset);
          handedOut[p]?.push(offset);
          outstanding.push({ partition: p, offset });
          next[p] = offset + 1n;
        } else if (action < 0.85 && outstanding.length > 0) {
          const [m] = outstanding.splice(randomInt(random, outstanding.length), 1);
          if (m === undefined) continue;
          tracker.markPlaced({ topic, partition: m.partition }, m.offset);
          placed[m.partition]?.add(m.offset);
        } else {
          const points = tracker.pendingCommits();
          for (const point of points) {
            const unplaced = (handedOut[point.partition] ?? []).filter((o) => o < point.offset && !placed[point.partition]?.has(o));
            assert.deepEqual(unplaced, [], `seed ${seed}: commit ${point.offset} on ${point.partition} passes unplaced ${unplaced.join(",")}`);
            assert.ok(point.offset > (committed[point.partition] ?? -1n), `seed ${seed}: commit went backwards`);
            committed[point.partition] = point.offset;
          }
          tracker.markCommitted(points);
        }
      }
      for (const m of outstanding) tracker.markPlaced({ topic, partition: m.partition }, m.offset);
      for (let p = 0; p < partitions; p++) {
        if ((handedOut[p] ?? []).length > 0) assert.equal(tracker.safeOffset({ topic, partition: p }), next[p], `seed ${seed}: all placed commits to the end`);
      }
      assert.equal(tracker.unplacedCount(), 0);
    }
  });
});
