// The matrix sampler (testkit/matrix.ts) and every matrix of the suite (testkit/matrices.ts): a
// seed draws the same points every time; any ceil(n / k) consecutive seeds draw every point of
// every matrix, so no point goes untested for long (a point no seed draws would be a sampler bug);
// the full tier runs all; TEST_POINTS runs exactly the points named and refuses an unknown one;
// a red point's error names it and the one command that reruns it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { coveragePeriod, forEachPoint, gateSampleSize, matrixSettings, sampledTests, sampleMatrix, type Matrix, type MatrixSettings } from "../../testkit/matrix.ts";
import { SUITE_MATRICES } from "../../testkit/matrices.ts";

const gate = (seed: number): MatrixSettings => ({ seed, tier: "gate", pinned: new Map() });

function toy(n: number, secondsPerPoint: number, gateSeconds: number): Matrix<number> {
  return { name: `toy-${n}`, file: "test/toy.test.ts", points: Array.from({ length: n }, (_, i) => i), id: (p) => `p${p}`, secondsPerPoint, gateSeconds };
}

describe("the matrix sampler", () => {
  it("sizes the gate's sample from the budget: at least one point, at most all", () => {
    assert.equal(gateSampleSize(22, 6, 20), 3);
    assert.equal(gateSampleSize(22, 60, 20), 1);
    assert.equal(gateSampleSize(5, 1, 100), 5);
    assert.equal(gateSampleSize(0, 1, 100), 0);
  });

  it("a seed draws the same points each time, in the matrix's own order", () => {
    const m = toy(22, 6, 20);
    const a = sampleMatrix(m, gate(4242)).points;
    assert.deepEqual(sampleMatrix(m, gate(4242)).points, a);
    assert.equal(a.length, 3);
    assert.deepEqual([...a].sort((x, y) => x - y), a, "run in the matrix's order");
  });

  it("any ceil(n/k) consecutive seeds draw every point (property, fast-check)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 999_999_999 }), (n, cost, budget, first) => {
        const m = toy(n, cost, budget);
        const period = coveragePeriod(n, cost, budget);
        const drawn = new Set<number>();
        for (let s = first; s < first + period; s++) for (const p of sampleMatrix(m, gate(s)).points) drawn.add(p);
        assert.equal(drawn.size, n, `seeds ${first} … ${first + period - 1} drew ${drawn.size} of ${n}`);
      }),
    );
  });

  it("every matrix of the suite: ids unique, a gate sample within its budget, every point drawn within its coverage period", () => {
    assert.ok(SUITE_MATRICES.length >= 5, `the suite's matrices are listed (${SUITE_MATRICES.length})`);
    const names = new Set<string>();
    for (const m of SUITE_MATRICES) {
      assert.ok(!names.has(m.name), `matrix name ${m.name} is unique`);
      names.add(m.name);
      const n = m.points.length;
      const k = gateSampleSize(n, m.secondsPerPoint, m.gateSeconds);
      assert.ok(k >= 1 && k * m.secondsPerPoint <= Math.max(m.gateSeconds, m.secondsPerPoint), `${m.name}: ${k} points fit its ${m.gateSeconds} s`);
      const period = coveragePeriod(n, m.secondsPerPoint, m.gateSeconds);
      const drawn = new Set<string>();
      for (let s = 1000; s < 1000 + period; s++) for (const p of sampleMatrix(m, gate(s)).points) drawn.add(m.id(p));
      assert.equal(drawn.size, n, `${m.name}: ${period} consecutive seeds draw all ${n} points`);
      assert.equal(sampleMatrix(m, { seed: 7, tier: "full", pinned: new Map() }).points.length, n, `${m.name}: the full tier runs every point`);
    }
  });

  it("TEST_POINTS runs exactly the named points and refuses an unknown one, listing the matrix's points", () => {
    const m = toy(10, 1, 3);
    const pinned = sampleMatrix(m, matrixSettings({ TEST_SEED: "5", TEST_POINTS: "toy-10=p7,other=x,toy-10=p2" }));
    assert.deepEqual(pinned.points, [2, 7]);
    assert.throws(
      () => sampleMatrix(m, matrixSettings({ TEST_POINTS: "toy-10=p99" })),
      (err: Error) => /matrix toy-10 has no point p99; its points: p0, p1/.test(err.message),
    );
  });

  it("bad settings name their variable", () => {
    assert.throws(() => matrixSettings({ TEST_SEED: "twelve" }), /TEST_SEED/);
    assert.throws(() => matrixSettings({ TEST_TIER: "deep" }), /TEST_TIER/);
    assert.throws(() => matrixSettings({ TEST_POINTS: "no-equals" }), /TEST_POINTS/);
    assert.deepEqual(matrixSettings({ TEST_SEED: "31", TEST_TIER: "full" }).tier, "full");
  });

  it("a red point's error names the point and the command that reruns it alone", async () => {
    const m = toy(6, 1, 6);
    const sample = sampleMatrix(m, gate(77));
    await assert.rejects(
      forEachPoint(sample, (p) => (p === 4 ? Promise.reject(new Error("boom")) : Promise.resolve())),
      (err: Error) => err.message.includes("point p4") && err.message.includes("TEST_SEED=77 TEST_POINTS='toy-6=p4' bash scripts/run-tests.sh test/toy.test.ts") && err.message.endsWith("boom"),
    );
  });

  it("a matrix of whole tests registers only the sampled points' tests, and names a point left without a test", () => {
    const m: Matrix<string> = { name: "faults", file: "test/f.test.ts", points: ["a", "b", "c", "d"], id: (p) => p, secondsPerPoint: 10, gateSeconds: 20 };
    const registered: string[] = [];
    const tests = sampledTests(sampleMatrix(m, gate(3)), (title) => registered.push(title));
    for (const p of ["a", "b", "c"]) tests.test(p, `fault ${p}`, () => Promise.resolve());
    assert.throws(() => tests.checkEveryPointHasATest(), /matrix faults: no test for d/);
    tests.test("d", "fault d", () => Promise.resolve());
    tests.checkEveryPointHasATest();
    assert.equal(registered.length, 2, "the gate registers the two drawn points' tests");
    assert.ok(registered.every((t) => /\[faults=[abcd]; 2 of 4 drawn by TEST_SEED=3/.test(t)), registered.join("; "));
    assert.throws(() => tests.test("e", "fault e", () => Promise.resolve()), /matrix faults has no point e/);
    const all: string[] = [];
    const full = sampledTests(sampleMatrix(m, { seed: 3, tier: "full", pinned: new Map() }), (title) => all.push(title));
    for (const p of m.points) full.test(p, p, () => Promise.resolve());
    assert.equal(all.length, 4, "make test-full registers every point's test");
    // a point that is several steps of one story: its further tests follow the first, drawn or not with it
    const drawn = sampleMatrix(m, gate(3)).points;
    const story: string[] = [];
    const steps = sampledTests(sampleMatrix(m, gate(3)), (title) => story.push(title));
    assert.throws(() => steps.alsoTest("a", "a, step 2", () => Promise.resolve()), /matrix faults: point a has no first test to follow/);
    for (const p of m.points) {
      steps.test(p, `${p}, step 1`, () => Promise.resolve());
      steps.alsoTest(p, `${p}, step 2`, () => Promise.resolve());
    }
    assert.deepEqual(story.map((t) => t.split(" [")[0]), drawn.flatMap((p) => [`${p}, step 1`, `${p}, step 2`]));
  });
});
