// End to end on the real stand, as world_initialize does it, for one day: this file OWNS the
// world's databases (stg ods dds dm dic), topics (hits, orders) and consumer groups for its
// duration, since the DDL fixes those names. It cleans the world, creates the topics, applies every
// DDL file in order, has the test stand's loader service consume, builds the generator (local
// mode), plays day 0 and waits for ODS; then checks the counts against the passport exactly,
// replays the day (ODS stays deduplicated), and claims the day-0 order snapshot the loader landed.
// It stops the loader and drops the world at the end.
// Other tests use the same databases, so the whole file runs under the shared world lock.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { connectClickHouse, type StandClickHouse } from "../../src/clickhouse/client.ts";
import { quoteString } from "../../src/clickhouse/sql.ts";
import { kafkaBroker, loadStandConfig } from "../../src/config/stand.ts";
import { HITS_CONSUMER_GROUP, HITS_TOPIC, ORDERS_CONSUMER_GROUP, ORDERS_TOPIC } from "../../src/world/constants.ts";
import { WorldTaskError } from "../../src/world/io.ts";
import { invalidTotal, loadPassport, type Passport, type PassportDay } from "../../src/world/passport.ts";
import { deleteConsumerGroups } from "../../tasks/consumer-groups.ts";
import { dropApplicationDatabases } from "../../tasks/databases.ts";
import { applyDdlFile, listDdlFiles } from "../../tasks/ddl.ts";
import { buildGenerator, type GeneratorBuild } from "../../tasks/generator-build.ts";
import { runGenerator } from "../../tasks/generator-run.ts";
import { waitForLoaderCommitted } from "../../tasks/ingest-wait.ts";
import { pullOrdersBatch } from "../../tasks/orders.ts";
import { createTopics, deleteTopics } from "../../tasks/topics.ts";
import { waitForOds } from "../../tasks/wait-for-ods.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";
import { recordingIo } from "../../testkit/world/recording-io.ts";
import { setTestIngest } from "../../testkit/world/ingest.ts";

const config = loadStandConfig();
const [node1, node2] = config.clickhouse.nodes;
let passport: Passport;
let day0: PassportDay;
let generator: GeneratorBuild;
let etl: StandClickHouse;
let worldLock: WorldLock | undefined;

async function cleanWorld(): Promise<void> {
  const io = recordingIo();
  await setTestIngest(io, "stopped", "world-e2e");
  await dropApplicationDatabases(io);
  await deleteConsumerGroups(io);
  await deleteTopics(io);
}

async function count(sql: string, on: StandClickHouse = etl): Promise<number> {
  const rows = await on.query<{ n: string }>(sql);
  return Number(rows[0]?.n ?? Number.NaN);
}

async function playDay0(): Promise<void> {
  await runGenerator({ ...recordingIo(true), build: generator, args: ["batch", "--day", "0", "--size", passport.size, "--brokers", kafkaBroker(config), "--topic", HITS_TOPIC.name] });
}

before(async () => {
  passport = await loadPassport();
  const day = passport.days[0];
  assert.ok(day && node1 && node2);
  day0 = day;
  worldLock = await takeWorldLock((line) => console.log(`  ${line}`));
  etl = connectClickHouse({ account: "etl" });
  await cleanWorld();
});

after(async () => {
  try {
    await cleanWorld();
    await etl.close();
  } finally {
    await worldLock?.release();
  }
});

test("topics, every DDL file in order, the generator build: the world's skeleton", async () => {
  const io = recordingIo(true);
  await createTopics(io);
  for (const file of await listDdlFiles()) await applyDdlFile({ ...io, file });
  generator = await buildGenerator({ ...io, mode: "local" });
  await setTestIngest(io, "consuming", "world-e2e");
  for (const node of [node1, node2]) {
    const ch = connectClickHouse({ node: node?.name, account: "etl" });
    assert.equal(await count("SELECT count() AS n FROM dic.products", ch), 180, `the whole catalog on ${node?.name}`);
    await ch.close();
  }
});

test("day 0 reaches ODS exactly: valid hits in ods.event_dist, each invalid kind in ods.event_errors_dist with its reason", async () => {
  await playDay0();
  const reached = await waitForOds({ ...recordingIo(true), passport, days: [0], timeoutMs: 120_000 });
  assert.equal(reached.eventRows + reached.errorRows, day0.events);
  const date = quoteString(day0.date);
  assert.equal(await count(`SELECT count() AS n FROM ods.event_dist WHERE EventDate = ${date}`), day0.valid);
  assert.equal(await count(`SELECT uniqExact(WatchID) AS n FROM ods.event_dist WHERE EventDate = ${date}`), day0.valid);
  const byClass = await etl.query<{ error_class: string; n: string }>("SELECT error_class, count() AS n FROM ods.event_errors_dist GROUP BY error_class ORDER BY error_class");
  const expected = Object.entries(day0.invalid).filter(([, n]) => n > 0).sort(([a], [b]) => a.localeCompare(b)).map(([kind, n]) => ({ error_class: kind, n: String(n) }));
  assert.deepEqual(byClass, expected, "every invalid hit has the reason its kind names, and nothing else is an error");
  assert.equal(await count("SELECT count() AS n FROM stg.hits_raw_dist"), day0.events, "stg holds every message once");
  // the typed columns came through: times are UTC instants of the day, money is exact
  const sample = await etl.query<{ t: string; types: string }>(
    `SELECT toString(min(UTCEventTime)) AS t, arrayStringConcat(groupUniqArray(toString(EventType)), ',') AS types FROM ods.event_dist WHERE EventDate = ${date}`,
  );
  assert.match(sample[0]?.t ?? "", /^2026-05-31 2\d:\d\d:\d\d$/, "the counter day starts at 20:00 UTC the day before");
  assert.deepEqual((sample[0]?.types ?? "").split(",").sort(), ["add_to_cart", "pageview", "purchase"]);
});

test("the loader lands hits partition p on node p mod 2: each node's stg shard holds one partition, with _raw and offsets", async () => {
  for (const node of [node1, node2]) {
    const ch = connectClickHouse({ node: node?.name, account: "etl" });
    const local = await count("SELECT count() AS n FROM stg.hits_raw", ch);
    const partitions = await ch.query<{ p: number }>("SELECT DISTINCT kafka_partition AS p FROM stg.hits_raw");
    const rawOk = await count("SELECT countIf(startsWith(_raw, '{') AND kafka_topic = 'hits') AS n FROM stg.hits_raw", ch);
    await ch.close();
    assert.ok(local > 0 && local < day0.events, `${node?.name} landed ${local} of ${day0.events}`);
    assert.deepEqual(partitions.map((r) => Number(r.p)), [node === node1 ? 0 : 1], `${node?.name} holds one partition`);
    assert.equal(rawOk, local, "every row keeps its message in _raw");
  }
  // offsets are the message's own: within a partition, distinct and dense from 0
  const dense = await etl.query<{ p: number; n: string; d: string; mx: string }>(
    "SELECT kafka_partition AS p, count() AS n, uniqExact(kafka_offset) AS d, max(kafka_offset) AS mx FROM stg.hits_raw_dist GROUP BY p ORDER BY p",
  );
  for (const r of dense) assert.equal(Number(r.mx) + 1, Number(r.d), `partition ${r.p}: offsets 0 … ${r.mx}, each once`);
});

test("waitForOds times out naming the counts it saw and the total it expected", async () => {
  const day1 = passport.days[1];
  assert.ok(day1);
  await assert.rejects(waitForOds({ ...recordingIo(), passport, days: [0, 1], timeoutMs: 2000, pollMs: 500 }), (err: unknown) => {
    assert.ok(err instanceof WorldTaskError);
    assert.match(err.message, new RegExp(`saw ${day0.valid} event rows for 2 passport date\\(s\\) \\+ ${invalidTotal(day0)} error rows = ${day0.events} of ${day0.events + day1.events}`));
    return true;
  });
});

test("waitForOds fails well before its timeout once the counts stand still short of the passport", async () => {
  const started = Date.now();
  await assert.rejects(waitForOds({ ...recordingIo(), passport, days: [0, 1], timeoutMs: 120_000, pollMs: 300, stallMs: 1500 }), (err: unknown) => {
    assert.ok(err instanceof WorldTaskError);
    assert.match(err.message, /no change for \d+ s after the loader placed every message/);
    return true;
  });
  assert.ok(Date.now() - started < 30_000, `failed after ${Date.now() - started} ms, not at the 120 s timeout`);
});

test("replaying day 0 leaves ODS deduplicated: FINAL and uniqExact(WatchID) still equal the passport, each refused hit once", async () => {
  const [clock] = await etl.query<{ t: string }>("SELECT toString(now()) AS t");
  const replayStart = quoteString(clock?.t ?? "");
  await playDay0();
  let landed = 0;
  const deadline = Date.now() + 120_000;
  while ((landed = await count("SELECT count() AS n FROM stg.hits_raw_dist")) < 2 * day0.events && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  assert.equal(landed, 2 * day0.events, "stg keeps both deliveries (no dedup in stg)");
  // the replayed copy of a refused hit replaces the first (newest _load_ts wins, merged or FINAL):
  // wait until every refused hit, read merged, is the replayed copy; however far merges got
  const replayed = () => count(`SELECT count() AS n FROM ods.event_errors_v WHERE _load_ts >= ${replayStart}`);
  const errorDeadline = Date.now() + 30_000;
  while ((await replayed()) < invalidTotal(day0) && Date.now() < errorDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const date = quoteString(day0.date);
  assert.equal(await count(`SELECT count() AS n FROM ods.event_dist FINAL WHERE EventDate = ${date}`), day0.valid);
  assert.equal(await count(`SELECT uniqExact(WatchID) AS n FROM ods.event_dist WHERE EventDate = ${date}`), day0.valid);
  assert.equal(await count(`SELECT count() AS n FROM ods.event_v WHERE EventDate = ${date}`), day0.valid);
  assert.equal(await replayed(), invalidTotal(day0), "every refused hit's replayed copy landed");
  assert.equal(await count("SELECT count() AS n FROM ods.event_errors_v"), invalidTotal(day0), "a replay does not double ods.event_errors");
});

test("orders: the loader lands a snapshot unclaimed; pull_batch claims each message once, a second pull claims nothing", async () => {
  const snapshot = passport.snapshots[0];
  assert.ok(snapshot);
  await runGenerator({ ...recordingIo(true), build: generator, args: ["snapshot", "--day", "0", "--size", passport.size, "--brokers", kafkaBroker(config), "--topic", ORDERS_TOPIC.name] });
  const first = await pullOrdersBatch({ ...recordingIo(true), loadId: "world-e2e-1", timeoutMs: 60_000 });
  assert.equal(first.landed, snapshot.orders, "every document of the snapshot claimed once");
  assert.deepEqual(first.ends, { "0": snapshot.orders });
  assert.equal(await count("SELECT count() AS n FROM stg.orders_raw_dist WHERE _load_id = ''"), snapshot.orders, "the loader's landing, unclaimed");
  const again = await pullOrdersBatch({ ...recordingIo(), loadId: "world-e2e-1", timeoutMs: 60_000 });
  assert.equal(again.landed, snapshot.orders, "a retry of the same load adds nothing");
  const second = await pullOrdersBatch({ ...recordingIo(), loadId: "world-e2e-2", timeoutMs: 60_000 });
  assert.equal(second.landed, 0, "a later load claims nothing already claimed");
  const raws = await etl.query<{ raw: string }>("SELECT raw FROM stg.orders_raw_dist WHERE _load_id = 'world-e2e-1' LIMIT 50");
  for (const { raw } of raws) assert.equal(Object.keys(JSON.parse(raw) as object).length, 11, "each document arrives whole (11 keys)");
  const kafka = new Kafka({ clientId: "world-e2e", brokers: [kafkaBroker(config)], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchOffsets({ groupId: ORDERS_CONSUMER_GROUP, topics: [ORDERS_TOPIC.name] });
  await admin.disconnect();
  assert.equal(Number(offsets[0]?.partitions[0]?.offset), snapshot.orders, "the group committed the end of the snapshot");
});

test("the loader lands awkward values, and each hit reaches ODS with its reason", async () => {
  // every field in its contract shape, then one defect per message; Title carries the expected verdict
  const base: Record<string, unknown> = {
    WatchID: 0, VisitID: 5, ClientID: 77, CounterID: 1, EventDate: "2026-05-01", UTCEventTime: "2026-05-01T10:00:00Z", ClientTimeZone: 240,
    EventType: "purchase", Sign: 1, URL: "https://shop/checkout", Referer: "", Title: "", UTMSource: "", UTMMedium: "", UTMCampaign: "",
    UTMContent: "", UTMTerm: "", LastTrafficSource: "direct", HasGCLID: 0, YCLID: 0, Browser: "Chrome", BrowserMajorVersion: 120,
    BrowserLanguage: "ru", OperatingSystem: "Windows 11", OperatingSystemRoot: "Windows", DeviceCategory: 1, MobilePhoneModel: "",
    ScreenWidth: 1920, ScreenHeight: 1080, IPAddress: "10.0.0.1", RegionCountry: "RU", RegionCity: "Samara", RegionCountryID: 225,
    RegionCityID: 51, GoalsReached: [2], ParsedParamsKey1: [], purchaseID: ["20260501-0001"], purchaseRevenue: [1234.56],
    purchaseCurrency: ["RUB"], purchaseCoupon: [""], productID: ["HOME-001"], productName: ["Lamp \"Nord\""], productCategory: ["home"],
    productPrice: [1490], productQuantity: [1], productEventType: ["purchase"], ecommerce: '{"purchase":{"id":"20260501-0001"}}',
  };
  const cases: [Record<string, unknown>, string][] = [
    [{}, "valid"], [{ WatchID: 0 }, "missing_id"], [{ ClientID: "" }, "missing_id"], [{ WatchID: null }, "missing_id"],
    [{ WatchID: -5 }, "bad_id"], [{ VisitID: 1.5 }, "bad_id"], [{ ClientID: 2 ** 53 + 2 }, "bad_id"],
    [{ UTCEventTime: "2026-05-01 10:00:00" }, "bad_timestamp"], [{ UTCEventTime: "" }, "bad_timestamp"],
    [{ UTCEventTime: "2026-02-31T10:00:00Z" }, "bad_timestamp"], [{ UTCEventTime: "2026-05-01T25:61:00Z" }, "bad_timestamp"],
    [{ EventDate: "2026-02-30" }, "bad_event_date"], [{ EventDate: "soon" }, "bad_event_date"],
    [{ EventType: "scroll" }, "unknown_event_type"], [{ EventType: "" }, "unknown_event_type"], [{}, "valid"],
  ];
  const messages = cases.map(([defect, verdict], i) => ({ value: JSON.stringify({ ...base, WatchID: 9_000_000 + i, ...defect, Title: verdict }) }));
  const kafka = new Kafka({ clientId: "world-e2e-awkward", brokers: [kafkaBroker(config)], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({ topic: HITS_TOPIC.name, messages });
  await producer.disconnect();
  const marker = "Title IN ('valid', 'missing_id', 'bad_id', 'bad_timestamp', 'bad_event_date', 'unknown_event_type')";
  // the loader commits once the INSERT returned, i.e. once every view wrote (a row in stg alone says
  // only that the INSERT began: the stg view writes before the ODS ones)
  await waitForLoaderCommitted({ ...recordingIo(), topic: HITS_TOPIC.name, group: HITS_CONSUMER_GROUP, timeoutMs: 60_000 });
  assert.equal(await count(`SELECT count() AS n FROM stg.hits_raw_dist WHERE ${marker}`), cases.length, "each awkward hit landed once");
  const landed = await etl.query<{ Title: string; error_class: string; n: string }>(
    `SELECT Title, error_class, count() AS n FROM ods.event_errors_dist WHERE ${marker} GROUP BY Title, error_class ORDER BY Title`,
  );
  const expectedErrors = new Map<string, number>();
  for (const [, verdict] of cases) if (verdict !== "valid") expectedErrors.set(verdict, (expectedErrors.get(verdict) ?? 0) + 1);
  assert.deepEqual(landed, [...expectedErrors].sort(([a], [b]) => a.localeCompare(b)).map(([v, n]) => ({ Title: v, error_class: v, n: String(n) })));
  const valid = await etl.query<{ revenue: string; name: string }>(
    "SELECT toString(purchaseRevenue[1]) AS revenue, productName[1] AS name FROM ods.event_dist WHERE Title = 'valid'",
  );
  assert.deepEqual(valid, [{ revenue: "1234.56", name: 'Lamp "Nord"' }, { revenue: "1234.56", name: 'Lamp "Nord"' }], "valid rows typed, money exact, text unescaped once");
});
