// Held tables back off on their own while other tables flow, and a batch that code 252 keeps
// refusing is split in halves after a few holds (fake inserters, a fake clock).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { RowInserter } from "../../src/loader/clickhouse-sink.ts";
import { compileLoaderConfig, type LoaderConfigInput } from "../../src/config/loader.ts";
import { LoaderCore, type CycleReport } from "../../src/loader/loader-core.ts";
import type { CommitPoint } from "../../src/loader/offsets.ts";
import { TableBackoffs } from "../../src/loader/table-backoff.ts";
import { serverError } from "../../testkit/loader-support.ts";

const topic = "events";

function tooManyParts(text: string): Error {
  return Object.assign(new Error(`Code: 252, e.displayText() = DB::Exception: ${text}`), { code: "252" });
}

function fakeCore(inserter: RowInserter, config: LoaderConfigInput) {
  let clock = 1_000_000;
  const commits: CommitPoint[] = [];
  const core = new LoaderCore({
    config: compileLoaderConfig(config),
    now: () => clock,
    random: () => 0.5,
    decodeMode: "json-object",
    route: (message) => ({ target: { node: "ch1", table: message.partition === 0 ? "good" : "broken" }, fields: {} }),
    inserter,
    deadLetters: { write: () => Promise.resolve() },
    commit: (points) => {
      commits.push(...points);
      return Promise.resolve();
    },
  });
  let offset = 0n;
  return {
    core,
    commits,
    tick: (ms: number) => (clock += ms),
    now: () => clock,
    send: (partition: number, count = 1) => {
      for (let k = 0; k < count; k++, offset++) core.accept({ topic, partition, offset, key: null, value: Buffer.from(`{"n":${offset}}`) });
    },
  };
}

describe("per-table backoff", () => {
  test("a table with a schema fault retries on its own backoff while another table flows; success resets it", async () => {
    let brokenFixed = false;
    const tries = { good: 0, broken: 0 };
    const w = fakeCore(
      {
        insertLines: ({ table }) => {
          if (table === "good") tries.good++;
          else tries.broken++;
          return table === "broken" && !brokenFixed ? Promise.reject(serverError(60)) : Promise.resolve();
        },
      },
      { flush: { maxAgeMs: 10 }, backoff: { initialMs: 100, maxMs: 1000, multiplier: 2, jitter: 0 } },
    );
    for (let step = 0; step < 40; step++) {
      w.send(0);
      w.send(1);
      w.tick(10);
      if (w.core.isDue()) await w.core.runCycle();
    }
    // tried at 10 ms, then after 100 and 200 ms of backoff; never again within 400 ms
    assert.equal(tries.broken, 3);
    assert.ok(tries.good >= 35, `the good table flowed: ${tries.good} inserts`);
    const status = w.core.status();
    assert.deepEqual(status.heldTables.map((t) => [t.table, t.holds, t.lastDelayMs, t.heldBy.kind, t.heldBy.code]), [["ch1:broken", 3, 400, "schema", 60]]);
    assert.equal(status.heldRows, 40);
    assert.equal(status.gate.down, false);
    brokenFixed = true;
    w.tick(400);
    const report = await w.core.runCycle();
    assert.equal(report.rowsLanded, 40);
    assert.deepEqual(w.core.status().heldTables, []);
    assert.equal(w.core.status().heldRows, 0);
    assert.equal(w.commits.at(-1)?.partition, 1);
  });

  test("backoff maths is the sink gate's: exponential, capped, equal jitter", () => {
    const backoffs = new TableBackoffs({ initialMs: 100, maxMs: 1000, multiplier: 2, jitter: 0.5 }, () => 0);
    const rejection = { kind: "schema" as const, code: 60, reason: "schema_60", text: "" };
    const delays = Array.from({ length: 6 }, () => backoffs.recordHeld("t", rejection, 0).lastDelayMs);
    assert.deepEqual(delays, [50, 100, 200, 400, 500, 500]);
    assert.equal(backoffs.mayRun("t", 499), false);
    assert.equal(backoffs.mayRun("other", 0), true);
    backoffs.recordSuccess("t");
    assert.equal(backoffs.mayRun("t", 0), true);
  });
});

describe("code 252", () => {
  const config = { tooManyPartsSplitAfter: 3, flush: { maxRows: 100 }, backoff: { initialMs: 10, maxMs: 100, jitter: 0 } };

  async function cycles(w: ReturnType<typeof fakeCore>, count: number): Promise<CycleReport[]> {
    const reports: CycleReport[] = [];
    for (let k = 0; k < count; k++) {
      w.tick(1000);
      reports.push(await w.core.runCycle({ all: true }));
    }
    return reports;
  }

  test("a batch held by 252 three times is split in halves on its next flush, and lands", async () => {
    const sizes: number[] = [];
    const w = fakeCore(
      {
        insertLines: (_table, lines) => {
          sizes.push(lines.length);
          return lines.length > 3 ? Promise.reject(tooManyParts("Too many partitions for single INSERT block (more than 3).")) : Promise.resolve();
        },
      },
      config,
    );
    w.send(0, 10);
    const held = await cycles(w, 3);
    assert.deepEqual(held.map((r) => [r.rowsHeld, r.heldBy[0]?.kind, r.heldBy[0]?.code]), [[10, "transient", 252], [10, "transient", 252], [10, "transient", 252]]);
    assert.deepEqual(sizes, [10, 10, 10], "held whole, as a transient fault");
    const [split] = await cycles(w, 1);
    assert.deepEqual(sizes.slice(3), [10, 5, 3, 2, 5, 3, 2]);
    assert.deepEqual([split?.rowsLanded, split?.rowsHeld, split?.deadLettersWritten], [10, 0, 0]);
    assert.deepEqual(w.commits.at(-1), { topic, partition: 0, offset: 10n });
  });

  test("a genuine TOO_MANY_PARTS costs one split attempt of about log2(rows) inserts, holds, and never dead-letters", async () => {
    const sizes: number[] = [];
    const w = fakeCore(
      {
        insertLines: (_table, lines) => {
          sizes.push(lines.length);
          return Promise.reject(tooManyParts("Too many parts (300). Merges are processing significantly slower than inserts."));
        },
      },
      config,
    );
    w.send(0, 16);
    const reports = await cycles(w, 5);
    assert.deepEqual(sizes, [16, 16, 16, 16, 8, 4, 2, 1, 16], "the split goes down the first half to one row, then the count starts again");
    assert.ok(reports.every((r) => r.rowsHeld === 16 && r.deadLettersWritten === 0 && r.rowsLanded === 0));
    assert.deepEqual(w.commits, []);
  });
});
