// The loader's pause points (test stand only): an armed point holds the next cycle of its topic at
// its moment, once, until released; nothing is inserted before before_insert is released, and
// nothing is committed before before_commit is released. No service needed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import type { CommitPoint } from "../../src/loader/offsets.ts";
import { armPauseBody, PausePoints } from "../../src/loader/pause-points.ts";

const TOPIC = "hits";

function coreWith(points: PausePoints) {
  const inserted: string[] = [];
  const commits: CommitPoint[][] = [];
  const core = new LoaderCore({
    config: compileLoaderConfig({ flush: { maxRows: 1000, maxAgeMs: 1 } }),
    decodeMode: "json-object",
    route: () => ({ target: { node: "ch1", table: "t" }, fields: {} }),
    inserter: {
      insertLines: (_table, lines) => {
        for (const line of lines) inserted.push(line.toString("utf8"));
        return Promise.resolve();
      },
    },
    deadLetters: { write: () => Promise.resolve() },
    commit: (p) => {
      commits.push([...p]);
      return Promise.resolve();
    },
    pause: (point, detail) => points.hold(point, TOPIC, detail),
  });
  for (let offset = 0n; offset < 3n; offset++) core.accept({ topic: TOPIC, partition: 0, offset, key: null, value: Buffer.from(`{"n":${offset}}`) });
  return { core, inserted, commits };
}

/** Lets pending promise callbacks run (the cycle reaches its next await). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("loader pause points", () => {
  it("before_insert holds the cycle before its first INSERT until released", async () => {
    const points = new PausePoints();
    const armed = points.arm({ point: "before_insert", topic: TOPIC });
    const { core, inserted, commits } = coreWith(points);
    const cycle = core.runCycle({ all: true });
    await settle();
    const [held] = points.list();
    assert.ok(held?.reachedAt !== undefined, "the cycle reached the point");
    assert.match(held.detail ?? "", /t: 3 rows/);
    assert.deepEqual(inserted, [], "nothing inserted while held");
    points.release(armed.id);
    const report = await cycle;
    assert.equal(report.rowsLanded, 3);
    assert.deepEqual(commits.flat().map((p) => p.offset), [3n]);
  });

  it("before_commit holds the cycle after its inserts returned and before the commit; a point holds once", async () => {
    const points = new PausePoints();
    const armed = points.arm({ point: "before_commit", topic: TOPIC });
    const { core, inserted, commits } = coreWith(points);
    const cycle = core.runCycle({ all: true });
    await settle();
    assert.equal(inserted.length, 3, "the rows were inserted");
    assert.equal(commits.length, 0, "and not committed while held");
    assert.match(points.list()[0]?.detail ?? "", /3 rows and 0 dead letters placed; would commit p0=3/);
    points.release(armed.id);
    await cycle;
    assert.deepEqual(commits.flat().map((p) => p.offset), [3n]);
    // reached and released: the next cycle runs through
    core.accept({ topic: TOPIC, partition: 0, offset: 3n, key: null, value: Buffer.from('{"n":3}') });
    await core.runCycle({ all: true });
    assert.deepEqual(commits.flat().map((p) => p.offset), [3n, 4n]);
  });

  it("a point of another topic does not hold, and releaseAll lets every held cycle go", async () => {
    const points = new PausePoints();
    points.arm({ point: "before_insert", topic: "orders" });
    const { core, commits } = coreWith(points);
    await core.runCycle({ all: true });
    assert.equal(commits.length, 1, "the hits cycle ran through an orders point");
    points.arm({ point: "before_commit", topic: TOPIC });
    core.accept({ topic: TOPIC, partition: 0, offset: 3n, key: null, value: Buffer.from('{"n":3}') });
    const cycle = core.runCycle({ all: true });
    await settle();
    points.releaseAll();
    await cycle;
    assert.equal(commits.length, 2);
  });

  it("the arm body is checked field by field", () => {
    assert.equal(armPauseBody.safeParse({ point: "before_insert", topic: "hits" }).success, true);
    for (const bad of [{ point: "after_lunch", topic: "hits" }, { point: "before_insert" }, { point: "before_insert", topic: "hits", extra: 1 }, []]) {
      assert.equal(armPauseBody.safeParse(bad).success, false, JSON.stringify(bad));
    }
  });
});
