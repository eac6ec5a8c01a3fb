// The passport on disk must be exactly what the generator produces now. When generator output
// changes on purpose, run `node --import tsx generator/src/cli.ts inventory --write` and commit.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync, readFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { repoRoot } from "../../src/config/stand.ts";
import { buildCatalog, catalogCsv, sha256Hex } from "../../generator/src/catalog.ts";
import { CATALOG_PATH, checkInventory } from "../../generator/src/inventory.ts";
import { DEFAULT_SEED, WORLD_SIZE_NAMES, WORLD_STARTING_DAYS, inventoryPath } from "../../generator/src/world.ts";
import { readPassport } from "../../testkit/world/generator-fixtures.ts";

const scratch = mkdtempSync(path.join(tmpdir(), "generator-inventory-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("world passport", () => {
  it("matches what the generator gives now (every size's data/world-inventory*.json and the catalog CSV)", () => {
    assert.deepEqual(checkInventory(repoRoot, DEFAULT_SEED), []);
  });

  it("describes the 8 starting days, snapshots 0…6 and a 180-SKU catalog", () => {
    const p = readPassport();
    assert.equal(p.WORLD_STARTING_DAYS, WORLD_STARTING_DAYS);
    assert.equal(p.seed, DEFAULT_SEED);
    assert.deepEqual(p.dates, ["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05", "2026-06-06", "2026-06-07", "2026-06-08"]);
    assert.deepEqual(p.snapshots.map((s) => s.day), [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(p.totals.events, p.days.reduce((sum, d) => sum + d.events, 0));
    assert.equal(p.totals.events, p.totals.valid + p.totals.invalid);
    assert.equal(p.catalog.products, 180);
    assert.equal(p.catalog.sha256, sha256Hex(readFileSync(path.join(repoRoot, CATALOG_PATH))));
    const perDay = p.totals.events / p.days.length;
    assert.ok(perDay > 10_000 && perDay < 14_000, `about 12,000 hits a day, got ${perDay}`);
  });

  it("fails the check when the generator's output differs from the file (here: another seed, the small world's passport)", () => {
    mkdirSync(path.join(scratch, "data/catalog"), { recursive: true });
    for (const size of WORLD_SIZE_NAMES) writeFileSync(path.join(scratch, inventoryPath(size)), readFileSync(path.join(repoRoot, inventoryPath(size))));
    writeFileSync(path.join(scratch, CATALOG_PATH), catalogCsv(buildCatalog()));
    const problems = checkInventory(scratch, DEFAULT_SEED + 1, ["small"]);
    assert.ok(problems.length > 0 && problems.every((p) => p.startsWith(`${inventoryPath("small")}:`)), problems.join("\n"));
  });

  it("fails the check when the catalog CSV was edited by hand", () => {
    writeFileSync(path.join(scratch, CATALOG_PATH), catalogCsv(buildCatalog()).replace("HOME-001", "HOME-999"));
    // the catalog is checked before any world size; the small world's passport keeps the check cheap
    assert.ok(checkInventory(scratch, DEFAULT_SEED, ["small"]).some((p) => p.includes(CATALOG_PATH)));
  });
});
