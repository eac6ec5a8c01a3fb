// check-clickhouse on the real stand: every check is green on a world that matches what it is
// compared with, and each one turns red when fed a wrong expectation (a check that never saw its
// failure proves only that it can print green). Holds the world lock: it rebuilds the world.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { StandConfig } from "../../src/config/stand.ts";
import { runClickHouseChecks, type CheckResult, type Expectations } from "../../src/world-ops/checks.ts";
import { runDdsTransform, runDmTransform } from "../../tasks/etl.ts";
import * as fx from "../../testkit/world/etl-fixture.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";
import { adminSession, insertDistributed, quietIo, rebuildWorldWithoutIngest, standConfig } from "../../testkit/world/etl-world.ts";

let lock: WorldLock;

/** What the fixture world holds, in passport terms. */
function fixtureExpectations(): Expectations {
  return {
    days: [
      { date: fx.D1, valid: 8, invalid: { missing_id: 2, bad_timestamp: 1, unknown_event_type: 0 }, validByType: { pageview: 6, add_to_cart: 1, purchase: 1 } },
      { date: fx.D2, valid: 8, invalid: { missing_id: 0, bad_timestamp: 0, unknown_event_type: 1 }, validByType: { pageview: 3, add_to_cart: 3, purchase: 2 } },
    ],
    lastSnapshot: { date: fx.D2, orders: 2, statuses: { paid: 1, cancelled: 1 } },
  };
}

before(async () => {
  lock = await takeWorldLock();
  await rebuildWorldWithoutIngest();
  const admin = adminSession();
  try {
    await insertDistributed(admin, "ods.event_dist", fx.HITS.map((h) => fx.odsEventRow(h)));
    await insertDistributed(admin, "ods.order_dist", fx.ORDERS.map((o) => fx.odsOrderRow(o)));
    await insertDistributed(admin, "ods.event_errors_dist", fx.ERROR_ROWS);
  } finally {
    await admin.close();
  }
  await runDdsTransform({ ...quietIo(), loadId: "checks" });
  await runDmTransform({ ...quietIo(), loadId: "checks" });
});

after(async () => {
  await lock?.release();
});

function red(results: readonly CheckResult[]): string[] {
  return results.filter((r) => !r.ok).map((r) => r.name);
}

function configWith(change: (nodes: StandConfig["clickhouse"]["nodes"]) => void, accounts?: Partial<StandConfig["clickhouse"]["accounts"]>): StandConfig {
  const copy: StandConfig = structuredClone(standConfig);
  change(copy.clickhouse.nodes);
  Object.assign(copy.clickhouse.accounts, accounts ?? {});
  return copy;
}

test("every check is green on a world that matches its passport and the stand config", async () => {
  const results = await runClickHouseChecks({ expectations: fixtureExpectations() });
  assert.deepEqual(red(results), [], JSON.stringify(results.filter((r) => !r.ok), null, 2));
  const names = results.map((r) => r.name);
  for (const expected of [
    "cluster topology seen from ch1", "cluster topology seen from ch2", "macros on ch1", "macros on ch2",
    "cluster() query reaches every shard", "distributed cross-read from ch1 (ods.event_dist)", "distributed cross-read from ch2 (ods.event_dist)",
    "distributed DDL queue has no unfinished entries", `ODS valid hits ${fx.D1}`, `ODS refused hits ${fx.D2}`,
    `DDS sessions hold every valid hit ${fx.D1}`, `DM funnel and traffic counts ${fx.D2}`, `ODS orders of snapshot ${fx.D2}`,
  ]) {
    assert.ok(names.includes(expected), `check '${expected}' ran`);
  }
});

test("the world-count checks turn red on a wrong passport count, each naming its day", async () => {
  const wrong = fixtureExpectations();
  const [d1, d2] = wrong.days;
  assert.ok(d1 && d2);
  d1.valid = 9;
  d2.invalid.unknown_event_type = 2;
  d2.validByType = { pageview: 3, add_to_cart: 3, purchase: 3 };
  wrong.lastSnapshot = { date: fx.D2, orders: 3, statuses: { paid: 2, cancelled: 1 } };
  const results = await runClickHouseChecks({ expectations: wrong });
  assert.deepEqual(red(results).sort(), [
    `DDS sessions hold every valid hit ${fx.D1}`,
    `DM funnel and traffic counts ${fx.D2}`,
    `ODS orders of snapshot ${fx.D2}`,
    `ODS refused hits ${fx.D2}`,
    `ODS valid hits ${fx.D1}`,
  ]);
  const valid = results.find((r) => r.name === `ODS valid hits ${fx.D1}`);
  assert.equal(valid?.actual, "8");
  assert.match(valid?.detail ?? "", /ODS holds 8 valid \+ 3 refused = 11 hits; the passport has 9 \+ 3 = 12\. 1 hits never reached ODS/);
});

test("an ODS day the passport does not list is red", async () => {
  const wrong = fixtureExpectations();
  wrong.days = wrong.days.filter((d) => d.date === fx.D2);
  const stray = (await runClickHouseChecks({ expectations: wrong })).find((r) => r.name === "ODS holds no day outside the passport's range");
  assert.equal(stray?.ok, false);
  assert.equal(stray?.actual, fx.D1);
});

test("cluster checks turn red when the cluster differs from the config", async () => {
  const wrongPort = await runClickHouseChecks({ expectations: fixtureExpectations(), config: configWith((n) => void (n[1] && (n[1].tcp_port += 7))) });
  assert.deepEqual(red(wrongPort), ["cluster topology seen from ch1", "cluster topology seen from ch2"]);

  const wrongShard = await runClickHouseChecks({ expectations: fixtureExpectations(), config: configWith((n) => void (n[1] && (n[1].shard = 3))) });
  assert.deepEqual(red(wrongShard), ["cluster topology seen from ch1", "cluster topology seen from ch2", "macros on ch2"]);

  // ch2's connection settings under another name: its replica macro and the fan-out disagree with the config.
  const renamed = await runClickHouseChecks({ expectations: fixtureExpectations(), config: configWith((n) => void (n[1] && (n[1].name = "chx"))) });
  assert.deepEqual(red(renamed), ["macros on chx", "cluster() query reaches every shard"]);

  // Both entries reach ch1: the "second shard" answers with ch1's local rows, so the sum is wrong.
  const sameNode = await runClickHouseChecks({
    expectations: fixtureExpectations(),
    config: configWith((n) => void (n[1] && n[0] && (n[1].http_port = n[0].http_port))),
  });
  assert.ok(red(sameNode).includes("distributed cross-read from ch1 (ods.event_dist)"), red(sameNode).join(", "));
});

test("the DDL queue check is red when entries finished on fewer hosts than required", async () => {
  const results = await runClickHouseChecks({ expectations: fixtureExpectations(), ddlQueueHosts: 3 });
  const queue = results.find((r) => r.name === "distributed DDL queue has no unfinished entries");
  assert.equal(queue?.ok, false);
  assert.match(queue?.detail ?? "", /unfinished: query-\d+ \(2\/3 hosts\)/);
});

test("a check query that cannot run is a red result naming the account, not a crash", async () => {
  const results = await runClickHouseChecks({ expectations: fixtureExpectations(), config: configWith(() => {}, { reader: { user: "reader", password: "wrong" } }) });
  const macros = results.find((r) => r.name === "macros on ch1");
  assert.equal(macros?.ok, false);
  assert.match(macros?.detail ?? "", /macros\.sql: statement 1 .* failed as account reader on node ch1/);
  assert.ok(results.find((r) => r.name === "cluster() query reaches every shard")?.ok, "the lifecycle query still runs");
});
