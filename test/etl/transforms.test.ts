// The dds and dm transforms on the real stand, on the hand-computable fixture (fixture.ts): the
// numbers they produce, that a rerun changes no mart row, which days the dates-to-process queries
// pick, that a rebuilt day hides rows its new build no longer has, and that etl cannot run DDL.
// Holds the world lock: it drops and recreates the world databases.
import assert from "node:assert/strict";
import { writeFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { connectClickHouse, type StandClickHouse } from "../../src/clickhouse/client.ts";
import { ClickHouseRefusedError } from "../../src/clickhouse/errors.ts";
import { detectPlatform } from "../../src/clickhouse/platform.ts";
import { ddsDatesToProcess, dmDatesToProcess, runDdsTransform, runDmTransform } from "../../tasks/etl.ts";
import { SqlStatementError, readSqlFile, runSqlFile } from "../../src/clickhouse/sql-files.ts";
import { runTemplateValues } from "../../tasks/etl-sql.ts";
import * as fx from "../../testkit/world/etl-fixture.ts";
import { snapshotAllViews, tuples } from "../../testkit/world/etl-marts.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";
import { adminSession, insertDistributed, quietIo, rebuildWorldWithoutIngest, standConfig } from "../../testkit/world/etl-world.ts";

let lock: WorldLock;
let admin: StandClickHouse;
const io = quietIo();

before(async () => {
  lock = await takeWorldLock();
  await rebuildWorldWithoutIngest();
  admin = adminSession();
  await insertDistributed(admin, "ods.event_dist", fx.HITS.map((h) => fx.odsEventRow(h)));
  await insertDistributed(admin, "ods.order_dist", fx.ORDERS.map((o) => fx.odsOrderRow(o)));
  await insertDistributed(admin, "ods.event_errors_dist", fx.ERROR_ROWS);
});

after(async () => {
  await admin?.close();
  await lock?.release();
});

async function buildAll(loadId: string, dates?: string[]): Promise<void> {
  await runDdsTransform({ ...io, loadId, dates });
  await runDmTransform({ ...io, loadId, dates });
}

test("on a fresh world every ODS day is due for dds, and dm has nothing to catch up", async () => {
  const dds = await ddsDatesToProcess({ ...io, redoDays: 0 });
  assert.deepEqual(dds, [
    { date: fx.D1, reasons: ["new_event_date", "order_changed"] },
    { date: fx.D2, reasons: ["new_event_date", "order_changed"] },
  ]);
  assert.deepEqual(await dmDatesToProcess(io), []);
});

test("the transforms produce the hand-computed sessions, identity, funnel, traffic, revenue and dq marts", async () => {
  const dds = await runDdsTransform({ ...io, loadId: "build-1" });
  assert.deepEqual(dds.dates, [fx.D1, fx.D2], "days derived from the data");
  assert.deepEqual(await dmDatesToProcess(io), [
    { date: fx.D1, reasons: ["dm_behind_dds"] },
    { date: fx.D2, reasons: ["dm_behind_dds"] },
  ]);
  const dm = await runDmTransform({ ...io, loadId: "build-1" });
  assert.deepEqual(dm.dates, [fx.D1, fx.D2]);
  assert.deepEqual(await dmDatesToProcess(io), [], "dm caught up with dds");

  const sessions = await tuples(admin, `SELECT client_id, toString(session_date), toString(started_at), toString(finished_at), duration_seconds,
      events_total, pageviews, cart_adds, purchases, entry_url, exit_url, utm_source FROM dds.session_v ORDER BY client_id, started_at`);
  assert.deepEqual(sessions, fx.EXPECTED_SESSIONS);
  const ids = await tuples(admin, "SELECT session_id, cityHash64(client_id, toUInt32(started_at)) FROM dds.session_v");
  for (const [id, expected] of ids) assert.equal(id, expected, "session_id is a pure function of client and start");

  assert.deepEqual(await tuples(admin, "SELECT client_id, user_id FROM dds.identity_v ORDER BY client_id"), fx.EXPECTED_IDENTITY);
  assert.deepEqual(
    await tuples(admin, "SELECT count(), min(toString(event_time)), any(device_category) FROM dds.event_v"),
    [[fx.HITS.length, `${fx.D1} 10:00:00`, "mobile"]],
    "dds.event_v: every valid hit, snake_case, event_time in Samara, device as a word",
  );
  assert.deepEqual(
    await tuples(admin, "SELECT order_id, toString(order_date), toString(created_at), item_sku, item_quantity FROM dds.order_v WHERE order_id = '20260602-0001'"),
    [["20260602-0001", fx.D2, `${fx.D2} 00:40:00`, ["WEAR-001"], [3]]],
    "created 20:40 UTC on D1 is 00:40 on D2 in Samara",
  );
  assert.deepEqual(
    await tuples(admin, "SELECT toString(report_date), visitors, viewed, carted, purchased, pageviews, cart_adds, purchases FROM dm.daily_funnel_v ORDER BY report_date"),
    fx.EXPECTED_FUNNEL,
  );
  assert.deepEqual(
    await tuples(admin, "SELECT toString(report_date), visitors, sessions, pageviews, known_users FROM dm.daily_traffic_v ORDER BY report_date"),
    fx.EXPECTED_TRAFFIC,
  );
  assert.deepEqual(
    await tuples(admin, "SELECT toString(report_date), category, orders, units, toString(revenue), toString(aov) FROM dm.daily_revenue_v ORDER BY report_date, category"),
    fx.EXPECTED_REVENUE,
  );
  assert.deepEqual(
    await tuples(admin, "SELECT toString(report_date), error_class, error_rows, distinct_errors FROM dm.daily_dq_errors_v ORDER BY report_date, error_class"),
    fx.EXPECTED_DQ,
  );
});

test("rerunning every day appends new versions and leaves every dds and dm view row-for-row identical", async () => {
  const first = await snapshotAllViews(admin);
  await buildAll("rerun-1", [fx.D1, fx.D2]);
  const second = await snapshotAllViews(admin);
  for (const [view, snap] of Object.entries(second)) {
    assert.ok(snap.rows.length > 0, `${view} has rows`);
    assert.deepEqual(snap.rows, first[view]?.rows, `${view} unchanged by the rerun`);
    if (snap.versions.length > 0) assert.notDeepEqual(snap.versions, first[view]?.versions, `${view} rows come from the new run`);
  }
});

test("after a build only the newest day is due again; a late hit and a newer order snapshot bring their days back", async () => {
  assert.deepEqual(await ddsDatesToProcess(io), [{ date: fx.D2, reasons: ["recent"] }]);
  assert.deepEqual(await ddsDatesToProcess({ ...io, redoDays: 0 }), []);

  // A hit of D1 landing after the last build began (stamped 5 s ago by the server's clock, so the
  // next build, which starts later, is strictly after it even at whole-second resolution).
  const now = (await admin.query<{ t: string }>("SELECT toString(now() - 5) AS t"))[0]?.t ?? "";
  await insertDistributed(admin, "ods.event_dist", [fx.odsEventRow({ id: 100, client: 3003, date: fx.D1, time: "12:45:00", type: "pageview", url: "/late" }, now)]);
  // Order 20260602-0001 cancelled in a later snapshot.
  const order = fx.ORDERS[1];
  assert.ok(order);
  await insertDistributed(admin, "ods.order_dist", [fx.odsOrderRow(order, { status: "cancelled", snapshot: "2026-06-03" })]);

  assert.deepEqual(await ddsDatesToProcess({ ...io, redoDays: 0 }), [
    { date: fx.D1, reasons: ["late_rows"] },
    { date: fx.D2, reasons: ["order_changed"] },
  ]);
});

test("a rebuilt day hides what its new build no longer has: merged sessions, revenue of a cancelled order", async () => {
  const dds = await runDdsTransform({ ...io, loadId: "late-1", redoDays: 0 });
  assert.deepEqual(dds.dates, [fx.D1, fx.D2]);
  // The late 12:45 hit bridges C's 12:30 and 13:00:01 hits (15 min gaps): one session now.
  assert.deepEqual(
    await tuples(admin, "SELECT toString(started_at), toString(finished_at), events_total FROM dds.session_v WHERE client_id = 3003 ORDER BY started_at"),
    [[`${fx.D1} 12:00:00`, `${fx.D1} 13:00:01`, 4]],
  );
  const stored = await tuples(admin, "SELECT count() FROM dds.session_dist WHERE client_id = 3003");
  assert.ok(Number(stored[0]?.[0]) >= 2, "the superseded 13:00:01 session is still stored, hidden by the view");

  assert.deepEqual(await dmDatesToProcess(io), [
    { date: fx.D1, reasons: ["dm_behind_dds"] },
    { date: fx.D2, reasons: ["dm_behind_dds"] },
  ]);
  await runDmTransform({ ...io, loadId: "late-1" });
  assert.deepEqual(
    await tuples(admin, "SELECT toString(report_date), category FROM dm.daily_revenue_v ORDER BY report_date, category"),
    [[fx.D1, "home"], [fx.D1, "textile"], [fx.D1, "unknown"]],
    "D2's only paid order was cancelled: its apparel row is gone",
  );
  assert.deepEqual(
    await tuples(admin, "SELECT toString(report_date), sessions, pageviews FROM dm.daily_traffic_v ORDER BY report_date"),
    [[fx.D1, 4, 7], [fx.D2, 3, 3]],
  );
  assert.deepEqual(await ddsDatesToProcess({ ...io, redoDays: 0, lateMarginSeconds: 0 }), [], "nothing is due once the late day is rebuilt");
});

test("etl cannot run DDL: the refusal names the account, and through an ETL file also the file and statement", async () => {
  const etl = connectClickHouse({ account: "etl", config: standConfig });
  try {
    for (const ddl of ["TRUNCATE TABLE dds.session", "ALTER TABLE dm.daily_revenue DROP PARTITION 202606", "OPTIMIZE TABLE dds.session FINAL"]) {
      await assert.rejects(etl.command(ddl), (err: unknown) => {
        assert.ok(err instanceof ClickHouseRefusedError, `${ddl}: a refusal, got ${String(err)}`);
        assert.match(err.message, /\(account etl\)/);
        return true;
      });
    }
    const dir = await mkdtemp(path.join(tmpdir(), "etl-ddl-"));
    try {
      const file = path.join(dir, "99-not-allowed.sql");
      await writeFile(file, "-- an ETL file must not hold DDL\nSELECT 1;\n\nTRUNCATE TABLE dds.session;\n");
      const platform = await detectPlatform(etl);
      const values = runTemplateValues(platform, { version: 1n, loadId: "t", startedAt: "2026-01-01 00:00:00", dates: [] });
      await assert.rejects(
        runSqlFile({ ...io, step: "ddsTransform", clickhouse: etl, file: await readSqlFile(file, "ddsTransform"), values }),
        (err: unknown) => {
          assert.ok(err instanceof SqlStatementError);
          assert.match(err.message, /99-not-allowed\.sql: statement 2 \(line 4\) failed as account etl on node ch1: TRUNCATE TABLE dds\.session/);
          return true;
        },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } finally {
    await etl.close();
  }
});
