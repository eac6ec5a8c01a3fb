// Hot reload of loader.options on the test stand, in a namespace of the test's own (topic, group,
// ClickHouse database, Postgres database; never the world's).
// 1. Under load, in process: a TopicLoader wired as the world's (routes read from the options in
//    force) while messages keep coming; the stand config file is saved (rename over it) with a
//    smaller flush.maxRows, then a new hits route, then a bad value: the batches shrink, messages
//    read after the route change land in the new table, the bad file is refused and the smaller
//    batches stay; no row lost or doubled.
// 2. The real loader service (src/loader/main.ts) on a copy of the test stand's config whose
//    Postgres database is the test's own (its control row says 'stopped': it never consumes):
//    saving the file applies, a bad value is refused with /health 200 'degraded' and reload.ok
//    false naming the field, SIGHUP and POST /reload read it again, and make loader-reload's
//    program prints each instance's answer and exits 1 on a refusal.
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";
import type { Admin, Producer } from "kafkajs";
import { Registry } from "prom-client";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { compileLoaderConfig, type LoaderConfigInput } from "../../src/config/loader.ts";
import { launchArgs, repoRoot } from "../../src/config/stand.ts";
import { ClickHouseRowInserter, qualifiedTable, type RowInserter } from "../../src/loader/clickhouse-sink.ts";
import { watchConfigFile } from "../../src/loader/config-watch.ts";
import type { TopicLoader } from "../../src/loader/consumer.ts";
import { ClickHouseDeadLetterSink, deadLetterTableDdl } from "../../src/loader/dead-letters.ts";
import { LoaderMetrics } from "../../src/loader/metrics.ts";
import { OptionsReloader, readStandConfigFile } from "../../src/loader/reload.ts";
import { hitsRouter, OptionsInForce } from "../../src/loader/routes.ts";
import type { ColumnRow } from "../../src/loader/table-schema.ts";
import type { LoaderTarget } from "../../src/loader/types.ts";
import { createTopicLoader } from "../../src/loader/world-loader.ts";
import { createTestDatabase, type TestDatabase } from "../../testkit/runner/runner-db.ts";
import type { LiveDatabase } from "../../testkit/stand/live-clickhouse.ts";
import { openTestTopic, type TestTopic } from "../../testkit/stand/test-topic.ts";
import { kafkaClient, randomName, waitUntil } from "../../testkit/stand/live-stand.ts";

const dir = mkdtempSync(path.join(tmpdir(), "loader-reload-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const testStandText = readFileSync(path.join(repoRoot, "test/stand.test.yaml"), "utf8");

/** The test stand's config with `options` as loader.options and `changes` applied to its sections. */
function standText(options: unknown, changes: { loaderPort?: number; runnerDatabase?: string } = {}): string {
  const doc = parseYaml(testStandText) as { loader: Record<string, unknown>; postgres: Record<string, unknown> };
  doc.loader = { ...doc.loader, options, ...(changes.loaderPort === undefined ? {} : { port: changes.loaderPort }) };
  if (changes.runnerDatabase !== undefined) doc.postgres = { ...doc.postgres, runner_database: changes.runnerDatabase };
  return stringifyYaml(doc);
}

/** Saves as vim and most editors do: a new file renamed over the old one. */
function saveByRename(file: string, text: string): void {
  writeFileSync(`${file}.swp`, text);
  renameSync(`${file}.swp`, file);
}

interface Batch {
  table: string;
  rows: number;
}

/** The ClickHouse inserter, noting each INSERT's table and row count as it is sent. */
class RecordingInserter implements RowInserter {
  readonly batches: Batch[] = [];
  readonly skipsUnknownFields: boolean;

  constructor(private readonly inner: ClickHouseRowInserter) {
    this.skipsUnknownFields = inner.skipsUnknownFields;
  }

  insertLines(target: LoaderTarget, lines: readonly Buffer[]): Promise<void> {
    this.batches.push({ table: target.table, rows: lines.length });
    return this.inner.insertLines(target, lines);
  }

  insertRowBinary(target: LoaderTarget, columnList: string, rows: readonly Buffer[]): Promise<void> {
    this.batches.push({ table: target.table, rows: rows.length });
    return this.inner.insertRowBinary(target, columnList, rows);
  }

  readColumns(target: LoaderTarget): Promise<ColumnRow[]> {
    return this.inner.readColumns(target);
  }

  nodeAnswers(target: LoaderTarget, timeoutMs: number): Promise<boolean> {
    return this.inner.nodeAnswers(target, timeoutMs);
  }
}

describe("a hot reload under load (TopicLoader, real Kafka and ClickHouse)", () => {
  const topic = randomName("loader_test");
  const groupId = randomName("loader_test");
  const kafka = kafkaClient(randomName("loader_test"));
  const file = path.join(dir, "stand.under-load.yaml");
  let admin: Admin;
  let producer: Producer;
  let db: LiveDatabase;
  let testTopic: TestTopic | undefined;
  let loader: TopicLoader | undefined;
  let producing = false;
  let producingDone: Promise<void> = Promise.resolve();

  before(async () => {
    testTopic = await openTestTopic(kafka, topic, 2);
    ({ admin, producer, db } = testTopic);
    for (const table of ["landing_a", "landing_b"]) {
      await db.client.command({
        query: `CREATE TABLE ${qualifiedTable(db.database, table)} (id UInt64, _raw String, kafka_topic String, kafka_partition UInt32, kafka_offset UInt64) ENGINE = MergeTree ORDER BY id`,
      });
    }
    await db.client.command({ query: deadLetterTableDdl(qualifiedTable(db.database, "dead_letters")) });
  });

  after(async () => {
    producing = false;
    await producingDone;
    await loader?.stop(); // a failed test must not leave a member in the group
    await testTopic?.close([groupId]);
  });

  /** 40 messages every 20 ms over both partitions (about 2,000 a second) until told to stop; resolves with how many. */
  async function produceUntilStopped(): Promise<number> {
    let id = 0;
    while (producing) {
      const messages = Array.from({ length: 40 }, () => ({ value: `{"id":${id}}`, partition: id++ % 2 }));
      await producer.send({ topic, messages });
      await sleep(20);
    }
    return id;
  }

  test("smaller batches, a new route, a refused file: the running options as the file last validated, every row once", async () => {
    const tableA = `${db.database}.landing_a`;
    const tableB = `${db.database}.landing_b`;
    const options: LoaderConfigInput = { flush: { maxRows: 400, maxAgeMs: 60_000 }, captureMode: "raw_only", routes: { hits: tableA } };
    writeFileSync(file, standText(options));
    const started = readStandConfigFile(file);
    const inForce = new OptionsInForce(compileLoaderConfig(started.loader.options ?? {}));
    const registry = new Registry();
    const metrics = new LoaderMetrics(registry);
    const inserter = new RecordingInserter(new ClickHouseRowInserter(db.client));
    const topicLoader = createTopicLoader({
      kafka,
      topic,
      groupId,
      tickMs: 20,
      decodeMode: "json-object",
      config: inForce.current,
      inserter,
      deadLetters: new ClickHouseDeadLetterSink(db.client, qualifiedTable(db.database, "dead_letters")),
      route: hitsRouter(["ch1"], inForce.landing("hits")),
      metrics,
    });
    loader = topicLoader;
    // what WorldLoader.reconfigure does: the options the routers read, then each topic loader's core
    const reloader = new OptionsReloader({
      read: () => readStandConfigFile(file),
      started,
      running: inForce.current,
      apply: (next) => {
        inForce.set(next);
        topicLoader.reconfigure(next);
      },
      metrics,
    });
    const watch = watchConfigFile(file, () => void reloader.reload("file"));
    try {
      await topicLoader.start();
      await topicLoader.joined();
      producing = true;
      const produced = produceUntilStopped();
      producingDone = produced.then(() => undefined);

      const batchesFor = (n: number) => waitUntil(`${n} batches`, () => Promise.resolve(inserter.batches.length >= n), () => JSON.stringify(inserter.batches.slice(-5)), 60_000);
      const reloaded = (n: number) => waitUntil(`reload ${n} to be read`, async () => (await reloadsCounted(registry)) >= n, () => JSON.stringify(reloader.status()), 10_000);
      await batchesFor(4);

      saveByRename(file, standText({ ...options, flush: { maxRows: 50, maxAgeMs: 60_000 } }));
      await reloaded(1);
      assert.deepEqual(reloader.status()?.changes, ["flush.maxRows 400 → 50"]);
      const smaller = inserter.batches.length;
      await batchesFor(smaller + 12);

      saveByRename(file, standText({ ...options, flush: { maxRows: 50, maxAgeMs: 60_000 }, routes: { hits: tableB } }));
      await reloaded(2);
      assert.deepEqual(reloader.status()?.changes, [`routes.hits "${tableA}" → "${tableB}"`]);
      await waitUntil("rows in the new route's table", () => Promise.resolve(inserter.batches.filter((b) => b.table === tableB).length >= 4), () => JSON.stringify(inserter.batches.slice(-5)), 60_000);

      saveByRename(file, standText({ ...options, flush: { maxRows: 0, maxAgeMs: 60_000 }, routes: { hits: tableB } }));
      await reloaded(3);
      const refused = reloader.status();
      assert.equal(refused?.ok, false);
      assert.match(refused?.error ?? "", /loader\.options\.flush\.maxRows: /);
      assert.match(await registry.getSingleMetricAsString("loader_config_last_reload_success"), / 0$/m);
      const afterRefusal = inserter.batches.length;
      await batchesFor(afterRefusal + 8);

      producing = false;
      const total = await produced;
      await waitUntil(`${total} messages read`, () => Promise.resolve(topicLoader.core.status().unplaced + inserter.batches.reduce((n, b) => n + b.rows, 0) >= total), () => topicLoader.describe(), 60_000);
      await topicLoader.stop(); // the rows waiting for their age (a minute) are flushed and committed by the stop
      assert.equal(await committed(admin, groupId, topic), total, "every message committed");

      const batches = inserter.batches;
      const before = batches.slice(0, smaller);
      assert.equal(Math.max(...before.map((b) => b.rows)), 400, `batches of 400 before the reload: ${before.map((b) => b.rows).join(" ")}`);
      // a batch taken before the reload may still be on its way; from the first small one on, all are small
      const after = batches.slice(smaller);
      const firstSmall = after.findIndex((b) => b.rows <= 50);
      assert.ok(firstSmall >= 0 && firstSmall <= 1, `at most one batch of the old size after the reload: ${after.slice(0, 5).map((b) => b.rows).join(" ")}`);
      const steady = after.slice(firstSmall);
      assert.deepEqual(steady.filter((b) => b.rows > 50), [], "every batch after the reload holds at most 50 rows");
      assert.ok(steady.filter((b) => b.rows === 50).length >= 10, "and most hold 50");
      assert.deepEqual(batches.slice(afterRefusal).filter((b) => b.rows > 50), [], "the refused file left flush.maxRows at 50");

      const rows = await db.query<{ id: string; n: string; tables: string }>(
        `SELECT id, count() AS n, uniqExact(t) AS tables FROM (SELECT id, 'a' AS t FROM ${tableA} UNION ALL SELECT id, 'b' AS t FROM ${tableB}) GROUP BY id`,
      );
      assert.equal(rows.length, total, "nothing lost");
      assert.deepEqual(rows.filter((r) => r.n !== "1"), [], "nothing doubled");
      // the route changed between two messages of each partition: everything read before it in A, after it in B
      const spans = await db.query<{ partition: number; a_max: string; b_min: string; b_rows: string }>(
        `SELECT a.kafka_partition AS partition, a.a_max, b.b_min, b.b_rows FROM
           (SELECT kafka_partition, toString(max(kafka_offset)) AS a_max FROM ${tableA} GROUP BY kafka_partition) AS a
           ALL INNER JOIN (SELECT kafka_partition, toString(min(kafka_offset)) AS b_min, toString(count()) AS b_rows FROM ${tableB} GROUP BY kafka_partition) AS b USING kafka_partition
         ORDER BY partition`,
      );
      assert.equal(spans.length, 2, "both partitions moved");
      for (const s of spans) assert.equal(BigInt(s.b_min), BigInt(s.a_max) + 1n, `partition ${s.partition}: the first offset in B follows the last in A`);
      const reloads = await registry.getSingleMetricAsString("loader_config_reloads_total");
      assert.match(reloads, /result="applied"} 2/);
      assert.match(reloads, /result="refused"} 1/);
    } finally {
      watch.close();
    }
  });
});

/** Reloads counted so far, whatever their result. */
async function reloadsCounted(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric("loader_config_reloads_total")?.get();
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

async function committed(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return (offsets?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface HealthBody {
  status: string;
  state: string;
  problems: string[];
  reload: { ok: boolean; at: string; trigger: string; result: string; changes: string[]; error?: string } | null;
}

describe("the loader service: a saved file, SIGHUP, POST /reload and make loader-reload", () => {
  const file = path.join(dir, "stand.service.yaml");
  let database: TestDatabase;
  let port = 0;
  let child: ChildProcess | undefined;
  let output = "";
  const childEnv = (): NodeJS.ProcessEnv => ({
    // Passing the environment on to the child, not reading configuration from it.
    // eslint-disable-next-line no-restricted-properties
    ...process.env,
    STAND_CONFIG: file,
    STAND_INSTANCE: "",
  });
  const text = (options: unknown) => standText(options, { loaderPort: port, runnerDatabase: database.name });

  async function health(): Promise<{ code: number; body: HealthBody }> {
    const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
    return { code: response.status, body: (await response.json()) as HealthBody };
  }

  async function metricsText(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
  }

  /** Waits for the reload after `previousAt` to show in /health; returns it. */
  async function nextReload(previousAt: string | undefined): Promise<NonNullable<HealthBody["reload"]>> {
    let last: HealthBody["reload"] = null;
    await waitUntil("the loader to report a reload", async () => ((last = (await health()).body.reload) !== null && last.at !== previousAt), () => JSON.stringify(last), 15_000);
    assert.ok(last);
    return last;
  }

  before(async () => {
    database = await createTestDatabase();
    port = await freePort();
    writeFileSync(file, text({ flush: { maxRows: 1000 } }));
    child = spawn(process.execPath, launchArgs(path.join(repoRoot, "src/loader/main.ts")), { cwd: repoRoot, env: childEnv(), stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await waitUntil(
      "the loader service's /health",
      async () => (await health().catch(() => undefined))?.body.state === "stopped",
      () => output.slice(-800),
      90_000,
    );
  });

  after(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child?.once("exit", () => resolve()));
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(30_000)]);
    }
    await database.drop(); // fails if the loader left a connection behind
  });

  test("applied, refused with the field named and 'degraded' (still 200), then good again by SIGHUP, POST /reload and make loader-reload", async () => {
    const first = await health();
    assert.equal(first.body.reload, null, "no reload yet");
    assert.equal(first.body.status, "healthy");

    saveByRename(file, text({ flush: { maxRows: 500 } }));
    const applied = await nextReload(undefined);
    assert.deepEqual({ ok: applied.ok, trigger: applied.trigger, result: applied.result, changes: applied.changes }, { ok: true, trigger: "file", result: "applied", changes: ["flush.maxRows 1000 → 500"] });
    assert.match(output, /loader options reloaded \(the stand config file changed\): flush\.maxRows 1000 → 500/);

    saveByRename(file, text({ flush: { maxRows: "lots" } }));
    const refused = await nextReload(applied.at);
    assert.equal(refused.ok, false);
    assert.equal(refused.result, "refused");
    assert.match(refused.error ?? "", /loader\.options\.flush\.maxRows: /);
    assert.match(output, /loader options NOT reloaded \(the stand config file changed\): .*loader\.options\.flush\.maxRows.*the running options are kept/);
    const degraded = await health();
    assert.equal(degraded.code, 200, "a refused reload is no dead service");
    assert.equal(degraded.body.status, "degraded");
    assert.deepEqual(degraded.body.problems, [], "no row is at risk");
    let metrics = await metricsText();
    assert.match(metrics, /loader_config_last_reload_success 0/);
    assert.match(metrics, /loader_config_reloads_total\{result="refused"} 1/);

    // make loader-reload's program reads the same file first: it refuses it, naming the field, with exit 1
    const cli = spawnSync(process.execPath, launchArgs(path.join(repoRoot, "src/loader/reload-cli.ts")), { cwd: repoRoot, env: childEnv(), encoding: "utf8", timeout: 60_000 });
    assert.equal(cli.status, 1, cli.stdout + cli.stderr);
    assert.match(cli.stderr, /loader-reload: .*invalid stand config:\n {2}loader\.options\.flush\.maxRows: .*\nThe running loaders refuse this file too and keep their options/s);
    const byCli = (await health()).body.reload;
    assert.equal(byCli?.at, refused.at, "it asked no loader");

    // the file put back as the loader runs it, then SIGHUP: nothing to change, good again
    writeFileSync(file, text({ flush: { maxRows: 500 } })); // in place this time
    const backByFile = await nextReload(byCli?.at);
    assert.equal(backByFile.result, "unchanged");
    child?.kill("SIGHUP");
    const bySignal = await nextReload(backByFile.at);
    assert.deepEqual([bySignal.trigger, bySignal.result, bySignal.ok], ["signal", "unchanged", true]);
    assert.equal((await health()).body.status, "healthy");

    const posted = await fetch(`http://127.0.0.1:${port}/reload`, { method: "POST", signal: AbortSignal.timeout(5000) });
    assert.equal(posted.status, 200);
    assert.equal(((await posted.json()) as { result: string }).result, "unchanged");

    // a change by make loader-reload's program alone (the file watch may beat it: either says it)
    writeFileSync(file, text({ flush: { maxRows: 250 } }));
    const ok = spawnSync(process.execPath, launchArgs(path.join(repoRoot, "src/loader/reload-cli.ts")), { cwd: repoRoot, env: childEnv(), encoding: "utf8", timeout: 60_000 });
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /^ok {3}loader: loader options reloaded \(POST \/reload\): (flush\.maxRows 500 → 250|nothing changed in loader\.options)$/m);
    await waitUntil("flush.maxRows 250 applied", () => Promise.resolve(/flush\.maxRows 500 → 250/.test(output)), () => output.slice(-500), 10_000);
    metrics = await metricsText();
    assert.match(metrics, /loader_config_last_reload_success 1/);
    assert.match(metrics, /loader_config_reloads_total\{result="applied"} 2/);
    assert.equal(child?.exitCode, null, "the loader ran through all of it");
  });
});
