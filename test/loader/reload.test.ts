// The hot reload of loader.options without any service: what differs between two option trees and
// how it is named, a reload applied (the new options handed on, the metrics and /health's status),
// refused (the running options kept, the bad field named, the gauge at 0), unchanged; changes that
// wait for the next start or take a restart; the file watch surviving rename-and-replace saves,
// debounced; and TopicLoader.reconfigure reaching its core (a smaller flush.maxRows makes it due).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, describe, test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { Registry } from "prom-client";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { compileLoaderConfig, type LoaderConfig, type LoaderConfigInput } from "../../src/config/loader.ts";
import { parseStandConfig, repoRoot, type StandConfig } from "../../src/config/stand.ts";
import { watchConfigFile } from "../../src/loader/config-watch.ts";
import { TopicLoader } from "../../src/loader/consumer.ts";
import { LoaderCore } from "../../src/loader/loader-core.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import { describeNeedRestart, describeReload, diffOptions, OptionsReloader, readStandConfigFile } from "../../src/loader/reload.ts";
import { WorldLoader } from "../../src/loader/world-loader.ts";

const dir = mkdtempSync(path.join(tmpdir(), "loader-reload-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const baseText = readFileSync(path.join(repoRoot, "test/stand.none.yaml"), "utf8");

/** The service-free stand config with `options` as loader.options (and `loader` fields changed when given). */
function standText(options: unknown, loader: Record<string, unknown> = {}): string {
  const doc = parseYaml(baseText) as { loader: Record<string, unknown> };
  doc.loader = { ...doc.loader, ...loader, options };
  return stringifyYaml(doc);
}

const stand = (options: unknown, loader: Record<string, unknown> = {}): StandConfig => parseStandConfig(standText(options, loader), "reload-test.yaml");

async function metric(registry: Registry, name: string): Promise<string> {
  return registry.getSingleMetricAsString(name);
}

describe("diffOptions", () => {
  test("names each leaf that differs, old → new, tables by their db.table key", () => {
    const before = compileLoaderConfig({ flush: { maxRows: 1000 } });
    const after = compileLoaderConfig({ flush: { maxRows: 500 }, routes: { hits: "bench_x.landing" }, tables: { "stg.hits_in": { headers: { "x-trace-id": "trace_id" } } } });
    assert.deepEqual(diffOptions(before, after), [
      { path: "flush.maxRows", from: "1000", to: "500" },
      { path: 'tables["stg.hits_in"].headers["x-trace-id"]', from: "(unset)", to: '"trace_id"' },
      { path: "routes.hits", from: '"stg.hits_in"', to: '"bench_x.landing"' },
    ]);
    assert.deepEqual(diffOptions(after, after), []);
    assert.deepEqual(diffOptions(compileLoaderConfig({}), compileLoaderConfig({ flush: {} })), [], "defaults written out are no change");
    assert.deepEqual(diffOptions({ a: [1, 2] }, { a: [1, 3] }), [{ path: "a[1]", from: "2", to: "3" }]);
    assert.deepEqual(diffOptions({ a: [1, 2] }, { a: [1] }), [{ path: "a", from: "[1,2]", to: "[1]" }]);
  });
});

describe("OptionsReloader", () => {
  function reloader(options: LoaderConfigInput, loader: Record<string, unknown> = {}) {
    const registry = new Registry();
    const metrics = new LoaderMetrics(registry);
    const started = stand(options, loader);
    let fileText = standText(options, loader);
    let clock = Date.UTC(2026, 11, 3, 10, 0, 0);
    const applied: LoaderConfig[] = [];
    let applyFails = false;
    const r = new OptionsReloader({
      read: () => parseStandConfig(fileText, "reload-test.yaml"),
      started,
      running: compileLoaderConfig(started.loader.options ?? {}),
      apply: (next) => {
        if (applyFails && next.flush.maxRows === 7) throw new Error("the core refused");
        applied.push(next);
      },
      metrics,
      now: () => (clock += 1000),
    });
    return {
      r,
      registry,
      applied,
      write: (text: string) => (fileText = text),
      failApply: () => (applyFails = true),
    };
  }

  test("applied: the new options are handed on, what changed is said, the metrics and status say so", async () => {
    const { r, registry, applied, write } = reloader({ flush: { maxRows: 1000 }, captureMode: "full" });
    assert.equal(r.status(), null, "no reload yet");
    assert.match(await metric(registry, "loader_config_last_reload_success"), / 1$/m, "1 before any reload");
    write(standText({ flush: { maxRows: 500 }, captureMode: "json_only" }));
    const outcome = r.reload("file");
    assert.equal(outcome.result, "applied");
    assert.deepEqual(outcome.changes.map((c) => c.path), ["flush.maxRows", "captureMode"]);
    assert.equal(applied.length, 1);
    assert.equal(applied[0]?.flush.maxRows, 500);
    assert.equal(r.options.flush.maxRows, 500);
    assert.equal(describeReload(outcome), 'loader options reloaded (the stand config file changed): flush.maxRows 1000 → 500; captureMode "full" → "json_only"');
    assert.deepEqual(r.status(), { ok: true, at: "2026-12-03T10:00:01.000Z", trigger: "file", result: "applied", changes: ["flush.maxRows 1000 → 500", 'captureMode "full" → "json_only"'] });
    const reloads = await metric(registry, "loader_config_reloads_total");
    assert.match(reloads, /result="applied"} 1/);
    assert.match(reloads, /result="refused"} 0/);
  });

  test("refused: the running options are kept, the log line and status name the bad field, the gauge drops to 0", async () => {
    const { r, registry, applied, write } = reloader({ flush: { maxRows: 1000 } });
    write(standText({ flush: { maxRows: 0 } }));
    const outcome = r.reload("signal");
    assert.equal(outcome.result, "refused");
    assert.equal(applied.length, 0, "nothing applied");
    assert.equal(r.options.flush.maxRows, 1000, "the running options kept");
    assert.match(outcome.error ?? "", /reload-test\.yaml: invalid stand config: loader\.options\.flush\.maxRows: /);
    assert.doesNotMatch(outcome.error ?? "", /\n/, "one line");
    assert.match(describeReload(outcome), /^loader options NOT reloaded \(SIGHUP\): .*loader\.options\.flush\.maxRows.*; the running options are kept\. Fix the file/);
    const status = r.status();
    assert.equal(status?.ok, false);
    assert.equal(status?.result, "refused");
    assert.match(status?.error ?? "", /loader\.options\.flush\.maxRows/);
    assert.match(await metric(registry, "loader_config_last_reload_success"), / 0$/m);
    assert.match(await metric(registry, "loader_config_reloads_total"), /result="refused"} 1/);

    // an unknown field, then YAML that does not parse: refused the same way, each naming what is wrong
    write(standText({ flush: { maxRows: 10, maxRowz: 5 } }));
    assert.match(r.reload("http").error ?? "", /loader\.options\.flush: Unrecognized key: "maxRowz"/);
    write("loader: [unclosed");
    assert.match(r.reload("http").error ?? "", /not valid YAML/);
    assert.equal(r.options.flush.maxRows, 1000);

    // the file put back as it runs: nothing to change, and the status is good again
    write(standText({ flush: { maxRows: 1000 } }));
    const back = r.reload("file");
    assert.equal(back.result, "unchanged");
    assert.equal(describeReload(back), "loader options reloaded (the stand config file changed): nothing changed in loader.options");
    assert.equal(r.status()?.ok, true);
    assert.equal(applied.length, 0, "unchanged applies nothing");
    assert.match(await metric(registry, "loader_config_last_reload_success"), / 1$/m);
    assert.match(await metric(registry, "loader_config_reloads_total"), /result="unchanged"} 1/);
  });

  test("backoff waits for the next start; a change outside loader.options takes a restart and is said", () => {
    const { r, write } = reloader({});
    write(standText({ backoff: { maxMs: 60_000 }, flush: { maxAgeMs: 100 } }, { port: 28241 }));
    const outcome = r.reload("file");
    assert.equal(outcome.result, "applied");
    assert.deepEqual(outcome.atNextStart, ["backoff.maxMs"]);
    assert.match(describeReload(outcome), /\(backoff\.maxMs: in force from the next start of consuming\)$/);
    assert.deepEqual(outcome.needRestart, ["loader.port"]);
    assert.match(describeNeedRestart(outcome) ?? "", /outside loader\.options \(loader\.port\): a reload does not apply that; restart the loader/);
    write(standText({ backoff: { maxMs: 60_000 }, flush: { maxAgeMs: 100 } }, { port: 28241 }));
    const again = r.reload("file");
    assert.equal(again.result, "unchanged");
    assert.deepEqual(again.needRestart, ["loader.port"], "still not in force: said again");
  });

  test("options the loader refuses to apply are put back and the reload refused", () => {
    const { r, applied, write, failApply } = reloader({ flush: { maxRows: 1000 } });
    failApply();
    write(standText({ flush: { maxRows: 7 } }));
    const outcome = r.reload("http");
    assert.equal(outcome.result, "refused");
    assert.match(outcome.error ?? "", /applying the new options failed \(the core refused\); the running options were put back/);
    assert.deepEqual(applied.map((c) => c.flush.maxRows), [1000], "the running options applied again");
    assert.equal(r.options.flush.maxRows, 1000);
  });

  test("readStandConfigFile reads the file each time and says when it cannot", () => {
    const file = path.join(dir, "read.yaml");
    writeFileSync(file, standText({ flush: { maxRows: 11 } }));
    assert.equal(readStandConfigFile(file).loader.options?.flush.maxRows, 11);
    writeFileSync(file, standText({ flush: { maxRows: 12 } }));
    assert.equal(readStandConfigFile(file).loader.options?.flush.maxRows, 12);
    assert.throws(() => readStandConfigFile(path.join(dir, "absent.yaml")), /cannot read the stand config .*absent\.yaml/);
  });
});

describe("watchConfigFile", () => {
  test("a burst of saves (rename over the file, writes in place) is one reload; other files of the directory are none", async () => {
    const file = path.join(dir, "watched.yaml");
    writeFileSync(file, "a: 1\n");
    let calls = 0;
    const watch = watchConfigFile(file, () => calls++, { debounceMs: 200 });
    try {
      await sleep(100);
      for (let i = 0; i < 3; i++) {
        // what vim and most editors do: write a new file, rename it over the old one
        writeFileSync(`${file}.tmp`, `a: ${i + 2}\n`);
        renameSync(`${file}.tmp`, file);
        await sleep(30);
      }
      await sleep(400);
      assert.equal(calls, 1, "one reload for the burst");
      writeFileSync(file, "a: 9\n"); // in place, after the rename: the new inode is watched as well
      await sleep(400);
      assert.equal(calls, 2);
      writeFileSync(path.join(dir, "other.yaml"), "b: 1\n");
      await sleep(400);
      assert.equal(calls, 2, "another file is not the stand config");
    } finally {
      watch.close();
    }
    writeFileSync(file, "a: 10\n");
    await sleep(400);
    assert.equal(calls, 2, "closed: no more reloads");
  });
});

describe("TopicLoader.reconfigure and WorldLoader.reconfigure", () => {
  test("a smaller flush.maxRows reaches the core: the rows it holds make it due", () => {
    // a client that never connects: the consumer is only built here
    const kafka = new Kafka({ clientId: "reload-test", brokers: ["127.0.0.1:1"], logLevel: logLevel.NOTHING });
    const config = compileLoaderConfig({ flush: { maxRows: 1000, maxAgeMs: 3_600_000 } });
    const loader = new TopicLoader({
      kafka,
      topic: "t",
      groupId: "g",
      createCore: (commit) =>
        new LoaderCore({
          config,
          commit,
          decodeMode: "json-object",
          route: () => ({ target: { node: "ch1", table: "t" }, fields: {} }),
          inserter: { insertLines: () => Promise.resolve() },
          deadLetters: { write: () => Promise.resolve() },
        }),
    });
    for (let offset = 0n; offset < 3n; offset++) loader.core.accept({ topic: "t", partition: 0, offset, key: null, value: Buffer.from(`{"n":${offset}}`) });
    assert.equal(loader.core.isDue(), false, "3 rows of 1000, an hour to wait");
    loader.reconfigure(compileLoaderConfig({ flush: { maxRows: 3, maxAgeMs: 3_600_000 } }));
    assert.equal(loader.core.isDue(), true, "3 rows of 3: due");
  });

  test("WorldLoader keeps the reloaded options for its next start and warns of a header onto a router's own column", () => {
    const lines: string[] = [];
    const log = { info: (l: string) => lines.push(l), warn: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
    const world = new WorldLoader({ config: stand({ flush: { maxRows: 1000 } }), registry: new Registry(), log });
    assert.equal(world.loaderConfig.flush.maxRows, 1000);
    assert.equal(world.loaderConfig.routes.hits, "stg.hits_in", "the default route");
    world.reconfigure(compileLoaderConfig({ flush: { maxRows: 10 }, routes: { orders: "stg.orders_b" }, tables: { "stg.hits_in": { headers: { "x-raw": "_raw", "x-trace-id": "trace_id" } } } }));
    assert.equal(world.loaderConfig.flush.maxRows, 10, "what the next start builds its cores with");
    assert.equal(world.loaderConfig.routes.orders, "stg.orders_b");
    assert.deepEqual(lines, ['loader.options.tables["stg.hits_in"].headers: header x-raw names column _raw, which the router writes itself; the header is not promoted (name another column)']);
  });
});
