// make test's lanes and budget (scripts/test-lanes.ts): the stand files split between the two test
// stands longest first onto the lighter lane, every file in exactly one lane; the budget table names
// each lane, the slowest files and the wall time, and says so when the wall time is over budget;
// the second test stand shares no port or state directory with the first or with the user's.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { budgetTable, DEFAULT_SECONDS, planLanes, SECOND_STAND_PORT_SHIFT, SECOND_STAND_STATE_DIR } from "../../scripts/test-lanes.ts";
import { shiftedStandConfigText } from "../../testkit/stand/shifted-stand.ts";
import { parseStandConfig, repoRoot } from "../../src/config/stand.ts";
import { readConfigFile, sharedResources } from "../../src/world-ops/guard.ts";

const dir = mkdtempSync(path.join(tmpdir(), "test-lanes-"));

describe("make test's lanes and budget", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("splits the files longest first onto the lighter lane; each file in exactly one lane", () => {
    const known = { "a.test.ts": 300, "b.test.ts": 200, "c.test.ts": 150, "d.test.ts": 100, "e.test.ts": 50 };
    const lanes = planLanes([...Object.keys(known), "new.test.ts"], 2, known);
    // a 300 → lane 1; b 200, c 150 → lane 2 (350); d 100 → lane 1 (400); e 50 → lane 2 (400); new (default 20) → lane 1
    assert.deepEqual(lanes.map((l) => l.seconds), [420, 400]);
    assert.deepEqual(lanes[0]?.files, ["a.test.ts", "d.test.ts", "new.test.ts"]);
    assert.equal(DEFAULT_SECONDS, 20);
    assert.deepEqual(lanes.flatMap((l) => l.files).sort(), [...Object.keys(known), "new.test.ts"].sort());
  });

  it("balances the files that run beside the others among themselves, after the others", () => {
    const known = { "w1.test.ts": 300, "w2.test.ts": 250, "w3.test.ts": 40, "b1.test.ts": 90, "b2.test.ts": 60, "b3.test.ts": 20 };
    const beside = new Set(["b1.test.ts", "b2.test.ts", "b3.test.ts"]);
    const lanes = planLanes(Object.keys(known), 2, known, beside);
    // the others: w1 → lane 1 (300); w2 → lane 2 (250); w3 → lane 2 (290). beside: b1 → lane 1, b2 → lane 2, b3 → lane 2 (80)
    assert.deepEqual(lanes.map((l) => [l.seconds, l.besideSeconds]), [[300, 90], [290, 80]]);
    assert.deepEqual(lanes.map((l) => l.files), [["b1.test.ts", "w1.test.ts"], ["b2.test.ts", "b3.test.ts", "w2.test.ts", "w3.test.ts"]]);
  });

  it("the budget table names the lanes and the slowest files, and says when the wall time is over budget", () => {
    const times = [
      { file: "test/x.test.ts", seconds: 120.5, passed: 3, failed: 0, skipped: 0 },
      { file: "test/y.test.ts", seconds: 30, passed: 2, failed: 1, skipped: 0 },
    ];
    const within = budgetTable([{ name: "stand-a", times, wallSeconds: 160 }], 500, 600).join("\n");
    assert.match(within, /stand-a +2 files +2 m 31 s in tests, 2 m 40 s wall; 5 passed, 1 failed, 0 skipped/);
    assert.match(within, /120\.5 s {2}test\/x\.test\.ts \(stand-a\)/);
    assert.match(within, /wall time: 8 m 20 s of the 10 m 00 s budget/);
    assert.doesNotMatch(within, /OVER BUDGET/);
    assert.match(budgetTable([{ name: "stand-a", times }], 601, 600).join("\n"), /OVER BUDGET: make test took 10 m 01 s, more than its 10 m 00 s/);
  });

  it("the second test stand shares no port or state directory with the test stand or the user's stand", () => {
    const file = path.join(dir, "stand.test-b.yaml");
    writeFileSync(file, shiftedStandConfigText(path.join(repoRoot, "test/stand.test.yaml"), SECOND_STAND_PORT_SHIFT, SECOND_STAND_STATE_DIR, "test"));
    const b = readConfigFile(file);
    assert.equal(b.state_dir, SECOND_STAND_STATE_DIR);
    assert.equal(b.postgres.port, readConfigFile("test/stand.test.yaml").postgres.port + SECOND_STAND_PORT_SHIFT);
    assert.deepEqual(sharedResources(readConfigFile("test/stand.test.yaml"), b), []);
    assert.deepEqual(sharedResources(readConfigFile("stand.yaml"), b), []);
    assert.ok(parseStandConfig(`${shiftedStandConfigText(file, 0, "x", "same")}`, "same.yaml"));
  });
});
