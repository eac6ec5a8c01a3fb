// A snapshot fits only the stand layout it was taken on, the world's size included: a small test
// world's data restored on a canonical stand would be a world whose passport it does not match.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseStandConfig, repoRoot } from "../../src/config/stand.ts";
import { layoutDifferences, standLayout } from "../../src/snapshots/store.ts";
import { readFileSync } from "node:fs";
import path from "node:path";

const userStand = parseStandConfig(readFileSync(path.join(repoRoot, "stand.yaml"), "utf8"), "stand.yaml");

test("a snapshot of another world size is refused, naming both sizes; the same size fits", () => {
  const canonical = standLayout(userStand);
  assert.equal(canonical.world_size, "canonical");
  const small = { ...canonical, world_size: "small" };
  assert.deepEqual(layoutDifferences(canonical, canonical), []);
  assert.deepEqual(layoutDifferences(small, canonical), ["a small world (this stand plays a canonical one: world.size)"]);
});

test("a snapshot taken before the size was recorded is judged by the rest of its layout", () => {
  const { world_size: _, ...older } = standLayout(userStand);
  assert.deepEqual(layoutDifferences(older, standLayout(userStand)), []);
});
