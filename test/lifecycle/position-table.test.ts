// The position table and the drift comparison as pure functions: every row of SPEC's table for
// world_initialize and the step DAGs, and each drift kind of the schema ledger. No stand needed.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LedgerRow } from "../../src/world/schema-ledger.ts";
import { compareWithBuild, summarize, type PlatformProbe } from "../../src/world/schema-status.ts";
import { initializeDecision, readPosition, stepRefusal } from "../../src/world/position.ts";

const START = 8;

describe("position table", () => {
  it("reads a position: missing, a whole number (spaces allowed), anything else unreadable", () => {
    assert.deepEqual(readPosition(null), { kind: "missing" });
    assert.deepEqual(readPosition(" -1 "), { kind: "number", value: -1 });
    assert.deepEqual(readPosition("8"), { kind: "number", value: 8 });
    assert.equal(readPosition("8.5").kind, "unreadable");
    assert.equal(readPosition("").kind, "unreadable");
  });

  it("world_initialize: creates on no variable and 0, refuses -1 and 1…START-1 naming the number, is a no-op from START on", () => {
    assert.deepEqual(initializeDecision(readPosition(null), START), { action: "create" });
    assert.deepEqual(initializeDecision(readPosition("0"), START), { action: "create" });
    for (const value of [-1, 1, 4, START - 1]) {
      const decision = initializeDecision(readPosition(String(value)), START);
      assert.equal(decision.action, "refuse");
      assert.match(decision.action === "refuse" ? decision.message : "", new RegExp(`is ${value}: cleanup unfinished, run make rebuild-storage`));
    }
    assert.equal(initializeDecision(readPosition("-7"), START).action, "refuse");
    assert.equal(initializeDecision(readPosition("x"), START).action, "refuse");
    assert.deepEqual(initializeDecision(readPosition(String(START)), START), { action: "exists", position: START });
    assert.deepEqual(initializeDecision(readPosition("12"), START), { action: "exists", position: 12 });
  });

  it("step DAGs: work from START on; otherwise refuse naming the value and the next step", () => {
    assert.equal(stepRefusal("world_next_day", readPosition(String(START)), START), undefined);
    assert.equal(stepRefusal("world_next_day", readPosition("30"), START), undefined);
    assert.match(stepRefusal("world_next_day", readPosition(null), START) ?? "", /is not set.*make up/);
    assert.match(stepRefusal("world_next_day", readPosition("0"), START) ?? "", /is 0 .*make up/);
    assert.match(stepRefusal("world_live_day", readPosition("-1"), START) ?? "", /is -1 .*make rebuild-storage/);
    assert.match(stepRefusal("world_live_day", readPosition("5"), START) ?? "", /is 5 .*make rebuild-storage/);
    assert.match(stepRefusal("world_live_day", readPosition("five"), START) ?? "", /'five'.*make rebuild-storage/);
  });
});

describe("schema drift", () => {
  const row = (file: string, checksum: string): LedgerRow => ({
    file,
    checksum,
    statements: 1,
    dagId: "world_initialize",
    runId: "r1",
    taskId: `ddl_${file}`,
    serverVersion: "18.16.1",
    appliedAt: new Date("2026-06-01T00:00:00Z"),
  });
  const platform: PlatformProbe = {
    node: "ch1", version: "18.16.1", has_sql_roles: false, has_json_functions: false, has_date_time64: false, has_sql_dictionaries: false, error: null,
  };

  it("flags changed, new and removed files; an unchanged file has no flag", () => {
    const files = compareWithBuild(
      [{ file: "00-a.sql", checksum: "a" }, { file: "10-b.sql", checksum: "b2" }, { file: "20-c.sql", checksum: "c" }],
      [row("00-a.sql", "a"), row("10-b.sql", "b"), row("15-gone.sql", "g")],
    );
    assert.deepEqual(files.map((f) => [f.file, f.drift]), [["00-a.sql", null], ["10-b.sql", "changed"], ["20-c.sql", "new"], ["15-gone.sql", "removed"]]);
    const status = summarize(files, [row("00-a.sql", "a")], "8", platform);
    assert.equal(status.status, "drift");
    assert.equal(status.drift, true);
    assert.deepEqual(status.summary, { unchanged: 1, changed: 1, new: 1, removed: 1 });
  });

  it("no build yet is not drift: nothing to compare with", () => {
    const status = summarize(compareWithBuild([{ file: "00-a.sql", checksum: "a" }], []), [], null, platform);
    assert.equal(status.status, "no_build");
    assert.equal(status.drift, false);
    assert.equal(status.files[0]?.drift, null);
    assert.deepEqual(status.summary, { unchanged: 0, changed: 0, new: 0, removed: 0 });
  });
});
