// Issue 21 on a real ClickHouse 18.16 of this test's own (private-clickhouse.ts: its own process,
// ports and dir, restarted by its supervisor when it dies; never a test stand node). A day of 2,000
// hits with the 50,000-deep object of the issue in the middle:
// - with the loader's limits, the object is a dead letter too_deep before any INSERT, the other
//   1,999 hits land, the server never dies;
// - with the depth and field limits switched off (standing for a shape the limits do not know), the object
//   kills the server for real; the batch is held twice, salvaged as suspect until the object is
//   alone, which becomes a dead letter kills_server; the other 1,999 land once, in a few deaths.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Registry } from "prom-client";
import { compileLoaderConfig, type LoaderConfig } from "../../src/config/loader.ts";
import { ClickHouseRowInserter, qualifiedTable } from "../../src/loader/clickhouse-sink.ts";
import { ClickHouseDeadLetterSink, deadLetterTableDdl } from "../../src/loader/dead-letters.ts";
import { DEFAULT_SHAPE_LIMITS, decodeMessageValue } from "../../src/loader/decode.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import { hitsRouter } from "../../src/loader/world-loader.ts";
import { worldLandingDdl } from "../../testkit/loader-support.ts";
import { startPrivateClickHouse, type PrivateClickHouse } from "../../testkit/stand/private-clickhouse.ts";

const topic = "hits_issue21";
const DAY = 2000;
const DEEP_AT = 1000n;
const deepObject = () => `{"WatchID":1000,"ClientID":7,"EventType":"pageview","x":${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}}`;
const hit = (n: bigint) => `{"WatchID":${n},"ClientID":${(n % 97n) + 1n},"EventType":"pageview","EventDate":"2026-01-01","URL":"https://shop.example/${n}"}`;


describe("issue 21 on a private ClickHouse 18.16", () => {
  let ch: PrivateClickHouse;

  before(async () => {
    ch = await startPrivateClickHouse();
    await ch.client.command({ query: "CREATE DATABASE issue21" });
  });

  after(async () => {
    await ch.stop();
  });

  async function day(name: string, config: LoaderConfig) {
    const hits = qualifiedTable("issue21", `${name}_hits`);
    const letters = qualifiedTable("issue21", `${name}_dead_letters`);
    await ch.client.command({ query: worldLandingDdl(hits) });
    await ch.client.command({ query: deadLetterTableDdl(letters) });
    const registry = new Registry();
    const core = new LoaderCore({
      config,
      inserter: new ClickHouseRowInserter(ch.client, { input_format_skip_unknown_fields: 1, insert_deduplicate: 0 }),
      deadLetters: new ClickHouseDeadLetterSink(ch.client, letters),
      commit: () => Promise.resolve(),
      decodeMode: "json-object",
      route: hitsRouter(["private"], hits),
      metrics: new LoaderMetrics(registry),
    });
    for (let offset = 0n; offset < BigInt(DAY); offset++) {
      core.accept({ topic, partition: 0, offset, key: null, value: Buffer.from(offset === DEEP_AT ? deepObject() : hit(offset)) });
    }
    const started = Date.now();
    let cycles = 0;
    while (core.status().unplaced > 0 && Date.now() - started < 240_000) {
      cycles++;
      await core.runCycle({ all: true, ignoreBackoff: true });
      if (core.status().unplaced > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await ch.waitUntilAnswering(30_000);
    const [counts] = await (await ch.client.query({ query: `SELECT count() AS rows, uniqExact(kafka_offset) AS offsets, countIf(kafka_offset = ${DEEP_AT}) AS deep FROM ${hits}`, format: "JSONEachRow" })).json<{ rows: string; offsets: string; deep: string }>();
    const dead = await (await ch.client.query({ query: `SELECT toString(offset) AS offset, reason, raw_bytes FROM ${letters} ORDER BY offset`, format: "JSONEachRow" })).json<{ offset: string; reason: string; raw_bytes: number }>();
    return { counts, dead, registry, unplaced: core.status().unplaced, cycles, seconds: (Date.now() - started) / 1000 };
  }

  test("the 50,000-deep object with the loader's limits: a dead letter too_deep, the day lands exactly, no death", async () => {
    const pid = ch.pid();
    const result = await day("limits", compileLoaderConfig({ flush: { maxRows: 20_000 } }));
    assert.equal(result.unplaced, 0);
    assert.deepEqual(result.counts, { rows: String(DAY - 1), offsets: String(DAY - 1), deep: "0" });
    assert.deepEqual(result.dead, [{ offset: String(DEEP_AT), reason: "too_deep", raw_bytes: Buffer.byteLength(deepObject()) }]);
    assert.equal(ch.deaths(), 0);
    assert.equal(ch.pid(), pid, "the same server process throughout");
  });

  test("depth limit off (a shape the limits do not know): the server dies for real, the object is found alone and is kills_server, the rest lands once", async () => {
    const defaults = compileLoaderConfig({ flush: { maxRows: 20_000 }, killsServer: { nodeBackPollMs: 100, nodeBackTimeoutMs: 60_000 } });
    // JSONEachRow: the server parses the object (and skipping its unknown field kills it); RowBinary never sends it (below)
    const config: LoaderConfig = Object.freeze({ ...defaults, insertFormat: "json_each_row", shapeLimits: { ...DEFAULT_SHAPE_LIMITS, maxDepth: 1_000_000, maxFields: 1_000_000 } });
    assert.ok(decodeMessageValue(Buffer.from(deepObject()), "json-object", config).ok, "the object must reach the server in this test");
    const deathsBefore = ch.deaths();
    const result = await day("nolimit", config);
    const deaths = ch.deaths() - deathsBefore;
    console.log(`a real 18.16 death per INSERT holding the object: ${deaths} deaths, ${result.cycles} cycles, ${result.seconds.toFixed(1)} s`);
    assert.equal(result.unplaced, 0);
    assert.deepEqual(result.counts, { rows: String(DAY - 1), offsets: String(DAY - 1), deep: "0" });
    assert.deepEqual(result.dead.map((d) => [d.offset, d.reason]), [[String(DEEP_AT), "kills_server"]]);
    const metric = await result.registry.getSingleMetricAsString("loader_node_deaths_total");
    // 2 deaths of the whole batch, then one per level of the 16-way split: 2000 → 125 → 8 → 1
    assert.ok(deaths >= 3 && deaths <= 2 + 3, `deaths ${deaths}; ${metric}`);
    assert.match(metric, /node="private",suspect="false"\} 2/);
    assert.match(await result.registry.getSingleMetricAsString("loader_dead_letters_total"), /reason="kills_server"\} 1/);
    assert.ok(await ch.answers(), "the server answers at the end");
  });

  test("depth limit off through RowBinary: the unknown deep field is never sent, so the object is a row and nobody dies", async () => {
    const pid = ch.pid();
    const defaults = compileLoaderConfig({ flush: { maxRows: 20_000 } });
    const config: LoaderConfig = Object.freeze({ ...defaults, shapeLimits: { ...DEFAULT_SHAPE_LIMITS, maxDepth: 1_000_000, maxFields: 1_000_000 } });
    assert.equal(config.insertFormat, "row_binary");
    const result = await day("binary", config);
    assert.equal(result.unplaced, 0);
    assert.deepEqual(result.counts, { rows: String(DAY), offsets: String(DAY), deep: "1" });
    assert.deepEqual(result.dead, []);
    assert.equal(ch.pid(), pid, "the same server process throughout");
  });
});
