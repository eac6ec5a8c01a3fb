// The loader core against fake sinks, over many random interleavings of messages, flush cycles,
// sink outages and rebalances: a commit never passes a message whose row or dead letter is not
// stored, bad rows end as dead letters and good rows as rows, and everything is placed in the end.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Registry } from "prom-client";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import type { DeadLetter } from "../../src/loader/dead-letters.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import type { CommitPoint } from "../../src/loader/offsets.ts";
import type { LoaderMessage } from "../../src/loader/types.ts";
import { randomInt, seededRandom, serverError } from "../../testkit/loader-support.ts";

const topic = "events";

interface World {
  core: LoaderCore;
  log: LoaderMessage[][];
  stored: Map<string, number>;
  deadLettered: Map<string, string>;
  committed: bigint[];
  setSinkDown(down: boolean): void;
  setDlqDown(down: boolean): void;
  tick(ms: number): void;
  registry: Registry;
  violations: string[];
}

const id = (partition: number, offset: bigint) => `${partition}/${offset}`;
const SKIP = '{"skip":true}';

/** Fakes: a Kafka log per partition, a table that refuses any batch holding a "bad" row, a DLQ. */
function fakeWorld(seed: number, random: () => number, partitions: number, maxRows: number): World {
  let clock = 1_000_000;
  let sinkDown = false;
  let dlqDown = false;
  const world = {
    log: Array.from({ length: partitions }, () => [] as LoaderMessage[]),
    stored: new Map<string, number>(),
    deadLettered: new Map<string, string>(),
    committed: Array.from({ length: partitions }, () => 0n),
    registry: new Registry(),
    // the loader catches a failed commit, so the fake records violations instead of throwing
    violations: [] as string[],
  };
  const core = new LoaderCore({
    config: compileLoaderConfig({ flush: { maxRows, maxAgeMs: 50 }, backoff: { initialMs: 10, maxMs: 100 } }),
    now: () => clock,
    random,
    metrics: new LoaderMetrics(world.registry),
    decodeMode: "json-object",
    route: (message, text) => (text === SKIP ? null : { target: { node: "ch1", table: "t" }, fields: { p: message.partition, o: Number(message.offset) } }),
    inserter: {
      insertLines: (_table, lines) => {
        if (sinkDown) return Promise.reject(serverError(random() < 0.5 ? 242 : 210));
        if (lines.some((line) => line.includes('"bad"'))) return Promise.reject(serverError(random() < 0.5 ? 27 : 117));
        for (const line of lines) {
          const { p, o } = JSON.parse(line.toString("utf8")) as { p: number; o: number };
          world.stored.set(id(p, BigInt(o)), (world.stored.get(id(p, BigInt(o))) ?? 0) + 1);
        }
        return Promise.resolve();
      },
    },
    deadLetters: {
      write: (letters: readonly DeadLetter[]) => {
        if (dlqDown) return Promise.reject(serverError(159));
        for (const l of letters) world.deadLettered.set(id(l.source.partition, l.source.offset), l.reason);
        return Promise.resolve();
      },
    },
    commit: (points: readonly CommitPoint[]) => {
      for (const point of points) {
        for (let o = 0n; o < point.offset; o++) {
          const key = id(point.partition, o);
          const skipped = world.log[point.partition]?.[Number(o)]?.value?.toString() === SKIP;
          if (!(skipped || world.stored.has(key) || world.deadLettered.has(key))) world.violations.push(`seed ${seed}: commit ${point.offset} on ${point.partition} passes unplaced offset ${o}`);
        }
        if (point.offset < (world.committed[point.partition] ?? 0n)) world.violations.push(`seed ${seed}: commit went backwards`);
        world.committed[point.partition] = point.offset;
      }
      return Promise.resolve();
    },
  });
  return {
    ...world,
    core,
    setSinkDown: (down) => (sinkDown = down),
    setDlqDown: (down) => (dlqDown = down),
    tick: (ms) => (clock += ms),
  };
}

function messageValue(random: () => number, offset: number): Buffer {
  const kind = random();
  if (kind < 0.04) return Buffer.from("not json");
  if (kind < 0.06) return Buffer.from("[1,2]");
  if (kind < 0.12) return Buffer.from('{"bad":true}');
  if (kind < 0.14) return Buffer.from(SKIP);
  return Buffer.from(`{"n":${offset}}`);
}

async function simulate(seed: number): Promise<void> {
  const random = seededRandom(seed);
  const partitions = 1 + randomInt(random, 3);
  const w = fakeWorld(seed, random, partitions, 1 + randomInt(random, 8));
  const position: bigint[] = Array.from({ length: partitions }, () => 0n);
  for (let step = 0; step < 200; step++) {
    const action = random();
    const p = randomInt(random, partitions);
    if (action < 0.4) {
      // the consumer hands out the next messages of a partition (producing them first if needed)
      for (let k = randomInt(random, 5); k >= 0; k--) {
        const offset = position[p] ?? 0n;
        const log = w.log[p] ?? [];
        if (Number(offset) >= log.length) log.push({ topic, partition: p, offset, key: null, value: messageValue(random, Number(offset)) });
        const message = log[Number(offset)];
        if (message !== undefined) w.core.accept(message);
        position[p] = offset + 1n;
      }
    } else if (action < 0.75) {
      w.tick(randomInt(random, 80));
      await w.core.runCycle({ all: random() < 0.2 });
    } else if (action < 0.85) {
      w.setSinkDown(random() < 0.4);
      w.setDlqDown(random() < 0.3);
    } else if (action < 0.92) {
      // a rebalance takes the partition away and gives it back: reading resumes at the committed offset
      await w.core.revoke([{ topic, partition: p }]);
      position[p] = w.committed[p] ?? 0n;
    }
  }
  // The sinks recover; the buffers drain; every message read is placed and committed.
  w.setSinkDown(false);
  w.setDlqDown(false);
  for (let i = 0; i < 50 && (w.core.status().unplaced > 0 || w.core.status().pendingDeadLetters > 0); i++) {
    w.tick(1000);
    await w.core.runCycle({ all: true });
  }
  assert.deepEqual(w.violations, []);
  assert.equal(w.core.status().unplaced, 0, `seed ${seed}: all placed ${JSON.stringify(w.core.status())}`);
  for (let p = 0; p < partitions; p++) {
    assert.equal(w.committed[p], position[p], `seed ${seed}: partition ${p} committed to what was read`);
    for (const message of (w.log[p] ?? []).slice(0, Number(position[p]))) {
      const key = id(p, message.offset);
      const text = message.value?.toString() ?? "";
      if (text === SKIP) continue;
      if (text === '{"bad":true}') {
        assert.ok(!w.stored.has(key), `seed ${seed}: bad row ${key} stored`);
        assert.ok(["cannot_parse_input_assertion_failed", "incorrect_data"].includes(w.deadLettered.get(key) ?? ""), `seed ${seed}: ${key} dead-lettered by code`);
      } else if (text.startsWith("{")) {
        assert.ok((w.stored.get(key) ?? 0) >= 1, `seed ${seed}: good row ${key} stored`);
        assert.ok(!w.deadLettered.has(key), `seed ${seed}: good row ${key} dead-lettered`);
      } else {
        assert.equal(w.deadLettered.get(key), text === "[1,2]" ? "not_object" : "not_json", `seed ${seed}: ${key}`);
      }
    }
  }
}

describe("LoaderCore", () => {
  test("property: 300 random interleavings of messages, cycles, outages and rebalances", async () => {
    for (let seed = 1; seed <= 300; seed++) await simulate(seed);
  });

  test("a cycle in which every insert fails transiently holds commits, opens the gate and backs off", async () => {
    const random = seededRandom(7);
    const w = fakeWorld(7, random, 1, 100);
    for (let o = 0; o < 5; o++) w.core.accept({ topic, partition: 0, offset: BigInt(o), key: null, value: Buffer.from(`{"n":${o}}`) });
    w.setSinkDown(true);
    const down = await w.core.runCycle({ all: true });
    assert.equal(down.gate.down, true);
    assert.deepEqual(down.committed, []);
    assert.equal(down.rowsHeld, 5);
    assert.ok(down.gate.lastDelayMs >= 5 && down.gate.lastDelayMs <= 10, `delay ${down.gate.lastDelayMs}`);
    assert.match(await w.registry.getSingleMetricAsString("loader_sink_down"), /loader_sink_down 1/);
    assert.equal((await w.core.runCycle({ all: true })).ran, false, "the next cycle waits for the backoff");
    w.setSinkDown(false);
    w.tick(20);
    const up = await w.core.runCycle({ all: true });
    assert.equal(up.gate.down, false);
    assert.equal(up.rowsLanded, 5);
    assert.deepEqual(up.committed, [{ topic, partition: 0, offset: 5n }]);
    assert.match(await w.registry.getSingleMetricAsString("loader_sink_down"), /loader_sink_down 0/);
    assert.match(await w.registry.getSingleMetricAsString("loader_rows_placed_total"), /table="ch1:t"} 5/);
  });

  test("a rebalance discards the revoked partition's rows before any write", async () => {
    const w = fakeWorld(3, seededRandom(3), 2, 100);
    for (let o = 0; o < 3; o++) {
      for (const p of [0, 1]) w.core.accept({ topic, partition: p, offset: BigInt(o), key: null, value: Buffer.from(`{"n":${o}}`) });
    }
    assert.equal(await w.core.revoke([{ topic, partition: 1 }]), 3);
    const report = await w.core.runCycle({ all: true });
    assert.equal(report.rowsLanded, 3);
    assert.deepEqual([...w.stored.keys()].sort(), ["0/0", "0/1", "0/2"]);
    assert.deepEqual(report.committed, [{ topic, partition: 0, offset: 3n }]);
    assert.match(await w.registry.getSingleMetricAsString("loader_revoke_discarded_total"), /stage="buffer"} 3/);
  });
});

test("a cycle flushes only the rows buffered when it began: rows read during its inserts wait, and it commits what it placed", async () => {
  const commits: CommitPoint[][] = [];
  const holder: { core?: LoaderCore } = {};
  let next = 0n;
  const message = (): LoaderMessage => ({ topic, partition: 0, offset: next++, key: null, value: Buffer.from(`{"n":${next}}`) });
  let inserts = 0;
  const core = new LoaderCore({
    config: compileLoaderConfig({ flush: { maxRows: 10, maxAgeMs: 1 } }),
    decodeMode: "json-object",
    route: () => ({ target: { node: "ch1", table: "t" }, fields: {} }),
    inserter: {
      insertLines: async () => {
        inserts++;
        // the consumer keeps reading while an insert is on the wire
        for (let i = 0; i < 10; i++) holder.core?.accept(message());
        await Promise.resolve();
      },
    },
    deadLetters: { write: () => Promise.resolve() },
    commit: (points) => {
      commits.push([...points]);
      return Promise.resolve();
    },
  });
  holder.core = core;
  for (let i = 0; i < 25; i++) core.accept(message());
  await new Promise((resolve) => setTimeout(resolve, 5));
  const report = await core.runCycle({ all: true });
  assert.equal(report.rowsLanded, 25, "the 25 rows buffered at the start (3 batches), not the 30 read meanwhile");
  assert.equal(inserts, 3);
  assert.deepEqual(commits.at(-1)?.map((p) => p.offset), [25n], "committed up to the rows placed");
  assert.equal(core.status().bufferedRows, 30, "the rows read during the cycle wait for the next one");
});
