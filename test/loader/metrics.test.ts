// The loader's metrics: everything in the registry the caller passes, per-table flush latency
// observed by the core, and the gauges the host sets (end offset, lag, state).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { compileLoaderConfig } from "../../src/config/loader.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";

test("metrics live in the caller's registry; the core observes per-table flush time; the host's gauges read back", async () => {
  const registry = new Registry();
  const metrics = new LoaderMetrics(registry);
  assert.doesNotThrow(() => new LoaderMetrics(new Registry()), "a second registry takes a second set");
  const core = new LoaderCore({
    config: compileLoaderConfig({}),
    decodeMode: "json-object",
    route: (message) => ({ target: message.partition === 0 ? { node: "ch1", table: "a" } : { node: "ch2", table: "b" }, fields: {} }),
    inserter: { insertLines: () => Promise.resolve() },
    deadLetters: { write: () => Promise.resolve() },
    commit: () => Promise.resolve(),
    metrics,
  });
  for (const [partition, offset] of [[0, 0n], [1, 0n], [0, 1n]] as const) core.accept({ topic: "t", partition, offset, key: null, value: Buffer.from("{}") });
  await core.runCycle({ all: true });
  const flush = await registry.getSingleMetricAsString("loader_table_flush_seconds");
  assert.match(flush, /loader_table_flush_seconds_count\{table="ch1:a"\} 1/);
  assert.match(flush, /loader_table_flush_seconds_count\{table="ch2:b"\} 1/);

  metrics.endOffset.set({ topic: "hits", partition: "0" }, 120);
  metrics.consumerLag.set({ topic: "hits", partition: "0" }, 20);
  metrics.state.reset();
  metrics.state.set({ state: "starting" }, 1);
  metrics.state.reset();
  metrics.state.set({ state: "consuming" }, 1);
  const text = await registry.metrics();
  assert.match(text, /loader_end_offset\{topic="hits",partition="0"\} 120/);
  assert.match(text, /loader_consumer_lag\{topic="hits",partition="0"\} 20/);
  assert.match(text, /loader_state\{state="consuming"\} 1/);
  assert.doesNotMatch(text, /state="starting"/);
  for (const name of ["loader_rows_placed_total", "loader_held_rows", "loader_sink_down", "loader_committed_offset", "loader_flush_seconds"]) {
    assert.match(text, new RegExp(`# HELP ${name} `), name);
  }
});
