// The loader's log about its cycles: silent while rows land, one warning when rows are first held,
// a reminder every 10 s, one line when inserts land again, and every failed commit.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CycleLog } from "../../src/loader/cycle-log.ts";
import type { CycleReport } from "../../src/loader/loader-core.ts";

function report(overrides: Partial<CycleReport>): CycleReport {
  return {
    ran: true,
    nodeDeaths: [],
    killers: [],
    tables: 1,
    rowsLanded: 0,
    deadLettersWritten: 0,
    deadLettersDropped: 0,
    rowsHeld: 0,
    heldBy: [],
    committed: [],
    commitError: undefined,
    gate: { down: false, consecutiveDownCycles: 0, consecutiveFailedCycles: 0, retryAt: 0, lastDelayMs: 0 },
    ...overrides,
  };
}

const refused = { kind: "transient" as const, code: 279, reason: "transient_279", text: "All connection tries failed (127.0.0.1:29100)" };

describe("CycleLog", () => {
  it("says when rows are first held, reminds every 10 s, and says when inserts land again", () => {
    let now = 1_000_000;
    const lines: string[] = [];
    const log = new CycleLog("hits", { info: (l) => lines.push(`info ${l}`), warn: (l) => lines.push(`warn ${l}`) }, () => now);
    log.cycle(report({ rowsLanded: 500 }));
    assert.deepEqual(lines, [], "a cycle that lands rows says nothing");
    log.cycle(report({ rowsHeld: 2000, heldBy: [refused] }));
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? "", /^warn hits: 2000 rows held, their INSERT refused \(transient transient_279\): All connection tries failed/);
    now += 4000;
    log.cycle(report({ rowsHeld: 2000, heldBy: [refused] }));
    assert.equal(lines.length, 1, "no second warning within 10 s");
    now += 7000;
    log.cycle(report({ rowsHeld: 2100, heldBy: [refused] }));
    assert.match(lines[1] ?? "", /^warn hits: rows still held after 11 s/);
    now += 1500;
    log.cycle(report({ rowsLanded: 2100 }));
    assert.match(lines[2] ?? "", /^info hits: inserts land again after 12\.5 s held \(2100 rows/);
    log.cycle(report({ rowsLanded: 10 }));
    assert.equal(lines.length, 3);
  });

  it("reports a failed commit and a cycle that threw; a cycle that did not run says nothing", () => {
    const lines: string[] = [];
    const log = new CycleLog("orders", { info: (l) => lines.push(l), warn: (l) => lines.push(l) });
    log.cycle(report({ ran: false }));
    log.cycle(report({ rowsLanded: 3, commitError: new Error("The coordinator is not aware of this member") }));
    log.cycle(undefined, new Error("socket hang up"));
    assert.equal(lines.length, 2);
    assert.match(lines[0] ?? "", /orders: committing offsets failed \(The coordinator is not aware of this member\)/);
    assert.match(lines[1] ?? "", /orders: a flush cycle failed: socket hang up/);
  });
});

describe("node deaths and kills_server", () => {
  it("says which node died under which batch, and which row was found to kill it", () => {
    const lines: string[] = [];
    const log = new CycleLog("hits", { info: (l) => lines.push(`info ${l}`), warn: (l) => lines.push(`warn ${l}`) });
    log.cycle(report({ nodeDeaths: [{ node: "ch2", table: "ch2:stg.hits_in", rows: 4000, suspect: false }] }));
    log.cycle(report({ nodeDeaths: [{ node: "ch2", table: "ch2:stg.hits_in", rows: 250, suspect: true }], killers: [{ node: "ch2", table: "ch2:stg.hits_in", topic: "hits", partition: 1, offset: 77n }] }));
    assert.deepEqual(lines, [
      "warn hits: ch2 stopped answering after an INSERT of 4000 rows into ch2:stg.hits_in lost its connection; the batch is held (salvaged as suspect after 2 such deaths in a row)",
      "warn hits: ch2 stopped answering after an INSERT of a suspect batch's slice (250 rows) into ch2:stg.hits_in lost its connection; the slice is split",
      "warn hits: hits/1@77 kills ch2 (its INSERT alone left the node not answering): a dead letter kills_server; the rest of its batch lands",
    ]);
  });
});
