// dm.purchase_vs_orders and the dq_check measurements on a played world of 10 days built without
// Kafka (world-fixture.ts) on the test stand: the mart's classes per closed day equal what the
// generator planted (data/world-inventory.json order_classes), every check passes on the world as
// built, and every check goes red when exactly what it guards is corrupted (and green again when
// the corruption is undone). The DAG itself, on a world built by the DAGs: dq-dag.test.ts.
// Holds the world lock: it recreates the world databases.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { StandClickHouse } from "../../src/clickhouse/client.ts";
import { loadPassport, type Passport } from "../../src/world/passport.ts";
import { readPosition } from "../../src/world/position.ts";
import { DQ_CHECKS, DqCheckFailedError, MISMATCH_CLASSES, assertCheckPassed, measureDataQuality, readCheckResults, type DqCheckName } from "../../tasks/dq.ts";
import { runDdsTransform, runDmTransform } from "../../tasks/etl.ts";
import { snapshotView } from "../../testkit/world/etl-marts.ts";
import { adminSession, quietIo } from "../../testkit/world/etl-world.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";
import { buildPlayedWorld, odsRow } from "../../testkit/world/dq-world.ts";

const DAYS = 10;
let lock: WorldLock;
let admin: StandClickHouse;
let passport: Passport;
let validHits: Record<string, unknown>[];
let runs = 0;

before(async () => {
  lock = await takeWorldLock();
  passport = await loadPassport();
  validHits = await buildPlayedWorld(DAYS, (line) => console.log(line));
  admin = adminSession();
});

after(async () => {
  await admin?.close();
  await lock?.release();
});

const dateOf = (day: number): string => passport.order_classes.days[day]?.date ?? assert.fail(`the passport has no order classes for day ${day}`);

/** Measures every check at `position` as a dq run; returns the checks that have failed rows. */
async function redChecks(position = DAYS): Promise<{ loadId: string; red: DqCheckName[] }> {
  const loadId = `dq-test-${++runs}`;
  const report = await measureDataQuality({ ...quietIo(), loadId, position: readPosition(String(position)), passport });
  return { loadId, red: report.checks.filter((c) => c.failedRows > 0).map((c) => c.check) };
}

/** Runs the check's task body on the published results: the error it throws, or undefined when green. */
async function checkTask(loadId: string, check: DqCheckName): Promise<{ error: DqCheckFailedError | undefined; log: string[] }> {
  const log: string[] = [];
  const results = await readCheckResults({ ...quietIo(), loadId, check });
  try {
    assertCheckPassed(check, results, (line) => log.push(line));
    return { error: undefined, log };
  } catch (err) {
    assert.ok(err instanceof DqCheckFailedError, `check_${check} threw ${String(err)}`);
    return { error: err, log };
  }
}

async function classCounts(): Promise<Map<string, Record<string, number>>> {
  const rows = await admin.query<{ d: string; c: string; n: string }>(
    "SELECT toString(order_day) AS d, mismatch_class AS c, toString(count()) AS n FROM dm.purchase_vs_orders_v GROUP BY d, c",
  );
  const byDay = new Map<string, Record<string, number>>();
  for (const r of rows) byDay.set(r.d, { ...byDay.get(r.d), [r.c]: Number(r.n) });
  return byDay;
}

test("dm.purchase_vs_orders: on every closed day the classes the generator planted; the newest day awaits its orders", async () => {
  const counts = await classCounts();
  const closedDays = DAYS - passport.order_window_days; // snapshots 0 … DAYS-2: day d closes with snapshot d+6
  assert.equal(closedDays, 3);
  for (let day = 0; day < closedDays; day++) {
    const planted = passport.order_classes.days[day];
    assert.ok(planted);
    const expected = Object.fromEntries(MISMATCH_CLASSES.map((c) => [c, c === "awaiting_order" ? 0 : planted.classes[c]]));
    const actual = Object.fromEntries(MISMATCH_CLASSES.map((c) => [c, counts.get(planted.date)?.[c] ?? 0]));
    console.log(`closed day ${day} (${planted.date}): ${JSON.stringify(actual)}`);
    assert.deepEqual(actual, expected, `classes of ${planted.date}`);
  }
  const last = passport.order_classes.days[DAYS - 1];
  assert.ok(last);
  assert.deepEqual(counts.get(last.date), { awaiting_order: last.orders - last.classes.lost_event }, "no snapshot holds the newest day: its purchases await their orders, lost ones are nowhere");

  const before = await snapshotView(admin, "dm.purchase_vs_orders_v");
  await runDmTransform({ ...quietIo(), loadId: "dq-build-2" });
  assert.deepEqual((await snapshotView(admin, "dm.purchase_vs_orders_v")).rows, before.rows, "a rerun changes no row");
});

test("every check passes on the world as built, and its results are published per day", async () => {
  const { loadId, red } = await redChecks();
  assert.deepEqual(red, []);
  const published = await admin.query<{ check_name: string; days: string; statuses: string[] }>(
    `SELECT check_name, toString(count()) AS days, groupUniqArray(status) AS statuses FROM dm.dq_summary_v WHERE run_id = '${loadId}' GROUP BY check_name ORDER BY check_name`,
  );
  assert.deepEqual(published.map((r) => r.check_name), [...DQ_CHECKS].sort());
  for (const r of published) assert.deepEqual(r.statuses, ["pass"], r.check_name);
  const days = Object.fromEntries(published.map((r) => [r.check_name, Number(r.days)]));
  assert.equal(days.sessions_vs_reference, DAYS);
  assert.equal(days.classes_vs_inventory, 3);
  assert.equal(days.freshness, 1);
  for (const check of DQ_CHECKS) assert.equal((await checkTask(loadId, check)).error, undefined, `check_${check} passes`);
});

/** Expects exactly `check` red, its task failing with offending keys matching `key`. */
async function expectOnlyRed(check: DqCheckName, key: RegExp): Promise<void> {
  const { loadId, red } = await redChecks();
  assert.deepEqual(red, [check]);
  const { error, log } = await checkTask(loadId, check);
  assert.ok(error, `check_${check} fails`);
  assert.match(error.message, new RegExp(`dq check ${check} failed: \\d+ failed row`));
  assert.ok(log.some((line) => key.test(line)), `the log names the offending key: ${log.join(" | ")}`);
  const [row] = await admin.query<{ status: string }>(`SELECT status FROM dm.dq_summary_v WHERE run_id = '${loadId}' AND check_name = '${check}' AND failed_rows > 0 LIMIT 1`);
  assert.equal(row?.status, "fail", "the red result is published");
}

async function expectAllGreen(): Promise<void> {
  assert.deepEqual((await redChecks()).red, []);
}

test("freshness is red when the position says a day was played that ODS does not hold", async () => {
  const { loadId, red } = await redChecks(DAYS + 1);
  assert.deepEqual(red, ["freshness"]);
  const { error, log } = await checkTask(loadId, "freshness");
  assert.ok(error);
  assert.ok(log.some((l) => l.includes(`ODS newest date ${dateOf(DAYS - 1)}, but world_position is ${DAYS + 1} says the last played day is ${dateOf(DAYS)}`)), log.join(" | "));
  await expectAllGreen();
});

interface MartCorruption {
  check: DqCheckName;
  table: string;
  view: string;
  columns: string[];
  where: string;
  column: string;
  key: RegExp;
}

/** A mart row rewritten as a newer version with one measure changed, then changed back the same way. */
async function corruptMart(c: MartCorruption, delta: string, loadId: string): Promise<void> {
  const select = c.columns.map((col) => (col === c.column ? `${col} + ${delta}` : col)).join(", ");
  await admin.command(
    `INSERT INTO ${c.table}_dist (${c.columns.join(", ")}, _version, _load_id, _load_ts) SELECT ${select}, _version + 1, '${loadId}', _load_ts FROM ${c.view} WHERE ${c.where} ORDER BY ${c.columns.slice(0, 2).join(", ")} LIMIT 1`,
    { insert_distributed_sync: 1 },
  );
}

const D0 = "toDate('2026-06-01')";
const MARTS: MartCorruption[] = [
  { check: "mart_daily_traffic", table: "dm.daily_traffic", view: "dm.daily_traffic_v", columns: ["report_date", "visitors", "sessions", "pageviews", "known_users"], where: `report_date = ${D0}`, column: "visitors", key: /2026-06-01: DDS visitors/ },
  { check: "mart_daily_funnel", table: "dm.daily_funnel", view: "dm.daily_funnel_v", columns: ["report_date", "visitors", "viewed", "carted", "purchased", "pageviews", "cart_adds", "purchases"], where: `report_date = ${D0}`, column: "carted", key: /2026-06-01: DDS visitors\/viewed\/carted/ },
  { check: "mart_daily_revenue", table: "dm.daily_revenue", view: "dm.daily_revenue_v", columns: ["report_date", "category", "orders", "units", "revenue", "aov"], where: `report_date = ${D0}`, column: "revenue", key: /2026-06-01 \S+: DDS orders/ },
  { check: "mart_daily_dq_errors", table: "dm.daily_dq_errors", view: "dm.daily_dq_errors_v", columns: ["report_date", "error_class", "error_rows", "distinct_errors"], where: `report_date = ${D0}`, column: "error_rows", key: /2026-06-01 \S+: ODS \d+ refused hits, mart/ },
  {
    check: "mart_purchase_vs_orders", table: "dm.purchase_vs_orders", view: "dm.purchase_vs_orders_v",
    columns: ["order_day", "order_id", "purchase_day", "purchase_hits", "declared_revenue", "declared_items_total", "status", "items_total", "total", "mismatch_class"],
    where: `order_day = ${D0} AND mismatch_class = 'match'`, column: "declared_revenue", key: /order 20260601-\d{4} on 2026-06-01: DDS match/,
  },
];

for (const mart of MARTS) {
  test(`${mart.check} is red when a row of ${mart.table} differs from DDS, green when it agrees again`, async () => {
    await corruptMart(mart, "1", "dq-corrupt");
    await expectOnlyRed(mart.check, mart.key);
    await corruptMart(mart, "-1", "dq-restore");
    await expectAllGreen();
  });
}

test("sessions_vs_reference is red when DDS holds a session the generator's visits do not, green once the day is rebuilt", async () => {
  const [victim] = await admin.query<{ client_id: string }>(`SELECT toString(client_id) AS client_id FROM dds.session_v WHERE session_date = ${D0} ORDER BY client_id LIMIT 1`);
  assert.ok(victim);
  // a phantom session of an existing cookie, one second after its first, in the day's committed version
  const columns = "session_id, client_id, session_date, started_at, finished_at, duration_seconds, events_total, pageviews, cart_adds, purchases, entry_url, exit_url, utm_source, utm_medium, utm_campaign, utm_content, utm_term, device_category, region_city";
  await admin.command(
    `INSERT INTO dds.session_dist (${columns}, _version, _load_id, _load_ts)
     SELECT session_id + 1, client_id, session_date, started_at + 1, finished_at, duration_seconds, events_total, pageviews, cart_adds, purchases, entry_url,
            exit_url, utm_source, utm_medium, utm_campaign, utm_content, utm_term, device_category, region_city, _version, 'dq-corrupt', _load_ts
       FROM dds.session_v WHERE client_id = ${victim.client_id} AND session_date = ${D0} ORDER BY started_at LIMIT 1`,
    { insert_distributed_sync: 1 },
  );
  await runDmTransform({ ...quietIo(), loadId: "dq-corrupt-dm" }); // the marts follow DDS: only the reference disagrees
  await expectOnlyRed("sessions_vs_reference", new RegExp(`client ${victim.client_id} on 2026-06-01: (\\d+) visits in ODS, \\d+ sessions in DDS`));
  await runDdsTransform({ ...quietIo(), loadId: "dq-restore-dds", dates: ["2026-06-01"] });
  await runDmTransform({ ...quietIo(), loadId: "dq-restore-dm" });
  await expectAllGreen();
});

// Last: the corruption stays (the next file that needs a world builds its own).
test("classes_vs_inventory is red when a closed day's purchase hit arrives twice (a resent hit with a new id): the mart no longer matches what was planted", async () => {
  const [order] = await admin.query<{ order_id: string }>(`SELECT order_id FROM dm.purchase_vs_orders_v WHERE order_day = ${D0} AND mismatch_class = 'match' ORDER BY order_id LIMIT 1`);
  assert.ok(order);
  const hit = validHits.find((h) => h.EventType === "purchase" && Array.isArray(h.purchaseID) && h.purchaseID[0] === order.order_id);
  assert.ok(hit, `the purchase hit of ${order.order_id}`);
  await admin.insert("ods.event_dist", [odsRow({ ...hit, WatchID: 4_000_000_000_000_001 })], { insert_distributed_sync: 1, input_format_skip_unknown_fields: 1 });
  await runDdsTransform({ ...quietIo(), loadId: "dq-corrupt-dds", dates: ["2026-06-01"] });
  await runDmTransform({ ...quietIo(), loadId: "dq-corrupt-dm2" });
  await expectOnlyRed("classes_vs_inventory", /2026-06-01 (match|duplicate_event): \d+ in dm\.purchase_vs_orders, \d+ planted/);
});
