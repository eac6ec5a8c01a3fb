// check-clickhouse's comparisons without a server: how a shortfall is explained, which ODS days
// are stray, and the newest-snapshot rule; and the expectations read from the real passport.
import assert from "node:assert/strict";
import { test } from "node:test";
import { compareDayCounts, compareLatestSnapshot, type Expectations } from "../../src/world-ops/check-compare.ts";
import { loadExpectations } from "../../src/world-ops/checks.ts";
import { loadPassport } from "../../src/world/passport.ts";

const expectations: Expectations = {
  days: [
    { date: "2026-06-01", valid: 100, invalid: { missing_id: 2, bad_timestamp: 1, unknown_event_type: 0 } },
    { date: "2026-06-02", valid: 50, invalid: { missing_id: 0, bad_timestamp: 0, unknown_event_type: 1 } },
  ],
  lastSnapshot: { date: "2026-06-02", orders: 10, statuses: { created: 3, paid: 7 } },
};

function byName(results: ReturnType<typeof compareDayCounts>, name: string): (typeof results)[number] {
  const found = results.find((r) => r.name === name);
  assert.ok(found, `result '${name}'`);
  return found;
}

test("a shortfall of valid hits says whether hits never arrived or were refused", () => {
  const lost = compareDayCounts(expectations, { events: [{ d: "2026-06-01", valid: "97", refused: "3" }, { d: "2026-06-02", valid: "50", refused: "1" }] });
  assert.match(byName(lost, "ODS valid hits 2026-06-01").detail, /3 hits never reached ODS \(delivery/);
  assert.equal(byName(lost, "ODS valid hits 2026-06-02").ok, true);
  const refused = compareDayCounts(expectations, { events: [{ d: "2026-06-01", valid: "95", refused: "8" }] });
  assert.match(byName(refused, "ODS valid hits 2026-06-01").detail, /5 valid hits were refused \(parsing/);
  assert.equal(byName(refused, "ODS valid hits 2026-06-02").actual, "0");
});

test("ODS days inside the passport's range but not in it are stray; later days are later world moves", () => {
  const rows = [
    { d: "2026-05-31", valid: 1, refused: 0 },
    { d: "2026-06-01", valid: 100, refused: 3 },
    { d: "2026-06-02", valid: 50, refused: 1 },
    { d: "2026-06-03", valid: 9, refused: 0 },
  ];
  const stray = byName(compareDayCounts(expectations, { events: rows }), "ODS holds no day outside the passport's range");
  assert.equal(stray.ok, false);
  assert.equal(stray.actual, "2026-05-31");
});

test("refused hits compare per reason, a reason the passport lacks included", () => {
  const results = compareDayCounts(expectations, {
    errors: [
      { d: "2026-06-01", error_class: "missing_id", refused: "2" },
      { d: "2026-06-01", error_class: "bad_timestamp", refused: "1" },
      { d: "2026-06-02", error_class: "unknown_event_type", refused: 1 },
      { d: "2026-06-02", error_class: "bad_id", refused: 4 },
    ],
  });
  assert.equal(byName(results, "ODS refused hits 2026-06-01").ok, true);
  const d2 = byName(results, "ODS refused hits 2026-06-02");
  assert.equal(d2.ok, false);
  assert.equal(d2.expected, "bad_id=0, unknown_event_type=1");
  assert.equal(d2.actual, "bad_id=4, unknown_event_type=1");
});

test("the newest snapshot compares only while ODS holds nothing newer", () => {
  const exact = compareLatestSnapshot(expectations, [
    { snapshot: "2026-06-01", status: "paid", orders: 4 },
    { snapshot: "2026-06-02", status: "created", orders: "3" },
    { snapshot: "2026-06-02", status: "paid", orders: "7" },
  ]);
  assert.deepEqual(exact.map((r) => [r.ok, r.actual]), [[true, "10 orders (created=3, paid=7)"]]);
  const short = compareLatestSnapshot(expectations, [{ snapshot: "2026-06-02", status: "paid", orders: "7" }]);
  assert.equal(short[0]?.ok, false);
  const later = compareLatestSnapshot(expectations, [{ snapshot: "2026-06-03", status: "paid", orders: 1 }]);
  assert.equal(later[0]?.ok, true);
  assert.match(later[0]?.detail ?? "", /not comparable/);
  assert.equal(compareLatestSnapshot(expectations, [])[0]?.ok, false);
});

test("expectations from the real passport: its days, valid hits by type and the newest snapshot", async () => {
  const passport = await loadPassport();
  const loaded = await loadExpectations();
  assert.deepEqual(loaded.days.map((d) => [d.date, d.valid]), passport.days.map((d) => [d.date, d.valid]));
  for (const day of loaded.days) {
    const byType = day.validByType ?? {};
    assert.equal((byType.pageview ?? 0) + (byType.add_to_cart ?? 0) + (byType.purchase ?? 0), day.valid, `${day.date}: types add up`);
  }
  assert.equal(loaded.lastSnapshot?.date, passport.snapshots.at(-1)?.date);
  assert.equal(loaded.lastSnapshot?.orders, passport.snapshots.at(-1)?.orders);
});
