// A batch whose INSERT kills its node (connection lost, the node not answering), against a fake node
// that dies on one row and comes back after a few pings, as a supervised server would: the batch is
// held twice, then salvaged as suspect, one slice at a time, until the row is alone; it becomes a
// dead letter kills_server, every other row lands once, the deaths are counted and few.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Registry } from "prom-client";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import type { DeadLetter } from "../../src/loader/dead-letters.ts";
import { LoaderCore, type CycleReport } from "../../src/loader/loader-core.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import { splitSlice } from "../../src/loader/salvage.ts";
import type { LoaderMessage } from "../../src/loader/types.ts";

const topic = "events";

function socketError(code: string, text: string): Error {
  return Object.assign(new Error(text), { code });
}

interface FakeNode {
  core: LoaderCore;
  stored: Map<bigint, number>;
  letters: DeadLetter[];
  deaths: number;
  maxInFlight: number;
  registry: Registry;
  reports: CycleReport[];
}

/** `killers`: offsets whose row kills the node; it is back after `downPings` attempts to reach it. */
function fakeNode(killers: ReadonlySet<bigint>, downPings: number, options: { alwaysDown?: boolean } = {}): FakeNode {
  let dead = false;
  let triesWhileDead = 0;
  // a supervised server: back after a few attempts to reach it (pings or INSERTs)
  const revive = () => {
    if (++triesWhileDead >= downPings && options.alwaysDown !== true) {
      dead = false;
      triesWhileDead = 0;
    }
  };
  let inFlight = 0;
  const registry = new Registry();
  const node: FakeNode = { core: undefined as unknown as LoaderCore, stored: new Map(), letters: [], deaths: 0, maxInFlight: 0, registry, reports: [] };
  node.core = new LoaderCore({
    config: compileLoaderConfig({ flush: { maxRows: 5000, maxAgeMs: 1 }, backoff: { initialMs: 1, maxMs: 2 }, killsServer: { nodeBackPollMs: 1, nodeBackTimeoutMs: 2000 } }),
    metrics: new LoaderMetrics(registry),
    decodeMode: "json-object",
    route: (message) => ({ target: { node: "ch2", table: "t" }, fields: { o: Number(message.offset) } }),
    inserter: {
      insertLines: async (_target, lines) => {
        inFlight++;
        node.maxInFlight = Math.max(node.maxInFlight, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        if (dead) {
          revive();
          throw socketError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:29101");
        }
        const offsets = lines.map((line) => BigInt((JSON.parse(line.toString("utf8")) as { o: number }).o));
        if (offsets.some((o) => killers.has(o))) {
          dead = true;
          node.deaths++;
          throw socketError("ECONNRESET", "socket hang up");
        }
        for (const o of offsets) node.stored.set(o, (node.stored.get(o) ?? 0) + 1);
      },
      nodeAnswers: () => {
        if (dead) revive();
        return Promise.resolve(!dead);
      },
    },
    deadLetters: {
      write: (letters) => {
        node.letters.push(...letters);
        return Promise.resolve();
      },
    },
    commit: () => Promise.resolve(),
  });
  return node;
}

function feed(core: LoaderCore, count: number): void {
  for (let offset = 0n; offset < BigInt(count); offset++) {
    const message: LoaderMessage = { topic, partition: 0, offset, key: null, value: Buffer.from(`{"x":"row ${offset}"}`) };
    core.accept(message);
  }
}

async function drain(node: FakeNode, cycles: number): Promise<void> {
  for (let n = 0; n < cycles && node.core.status().unplaced > 0; n++) {
    node.reports.push(await node.core.runCycle({ all: true, ignoreBackoff: true }));
  }
}

describe("kills_server: a row that kills its node", () => {
  test("splitSlice cuts in nearly equal parts, in order, never more parts than rows", () => {
    assert.deepEqual(splitSlice([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4, 5]]);
    assert.deepEqual(splitSlice([1, 2, 3], 16), [[1], [2], [3]]);
    assert.deepEqual(splitSlice([1, 2, 3, 4, 5, 6, 7, 8], 4).flat(), [1, 2, 3, 4, 5, 6, 7, 8]);
  });

  test("one killer among 5,000 rows: held twice, bisected as suspect, a dead letter; the rest lands once; a few deaths", async () => {
    const node = fakeNode(new Set([3_141n]), 3);
    feed(node.core, 5000);
    await drain(node, 20);
    assert.equal(node.core.status().unplaced, 0);
    assert.equal(node.stored.size, 4999);
    assert.ok([...node.stored.values()].every((n) => n === 1), "every other row landed once");
    assert.deepEqual(node.letters.map((l) => [l.reason, l.source.offset, l.errorCode]), [["kills_server", 3_141n, undefined]]);
    // 2 whole-batch deaths, then one per level of a 16-way split of 5,000 rows: 5000 → 313 → 20 → 2 → 1
    assert.ok(node.deaths <= 2 + 4, `deaths ${node.deaths}`);
    assert.equal(node.maxInFlight, 1, "at most one INSERT in flight to the node");
    const metrics = await node.registry.getSingleMetricAsString("loader_node_deaths_total");
    assert.match(metrics, /loader_node_deaths_total\{node="ch2",suspect="false"\} 2/);
    assert.match(metrics, new RegExp(`loader_node_deaths_total\\{node="ch2",suspect="true"\\} ${node.deaths - 2}`));
    assert.match(await node.registry.getSingleMetricAsString("loader_dead_letters_total"), /reason="kills_server"\} 1/);
    assert.deepEqual(node.reports.flatMap((r) => r.killers.map((k) => `${k.node} ${k.partition}@${k.offset}`)), ["ch2 0@3141"]);
    console.log(`5,000 rows, one killer: ${node.deaths} node deaths, ${node.reports.length} cycles`);
  });

  test("three killers: each alone a dead letter, the rest lands", async () => {
    const killers = new Set([7n, 1_500n, 1_501n]);
    const node = fakeNode(killers, 2);
    feed(node.core, 2000);
    await drain(node, 40);
    assert.equal(node.core.status().unplaced, 0);
    assert.equal(node.stored.size, 1997);
    assert.deepEqual(node.letters.map((l) => l.source.offset).sort((a, b) => Number(a - b)), [...killers]);
    assert.ok(node.letters.every((l) => l.reason === "kills_server"));
  });

  test("a node that is merely down (connection refused) is never bisected: rows are held, nothing is a dead letter", async () => {
    const node = fakeNode(new Set([10n]), 1, { alwaysDown: true });
    feed(node.core, 100);
    await drain(node, 6);
    // one death (the killer's batch), then every try is refused: never two deaths in a row
    assert.equal(node.deaths, 1);
    assert.equal(node.letters.length, 0);
    assert.equal(node.stored.size, 0);
    assert.equal(node.core.status().unplaced, 100);
  });
});
