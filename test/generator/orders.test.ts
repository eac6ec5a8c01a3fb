// Order snapshots (stand-facts §2): 11 keys, money that adds up, sorted rows, one snapshot_date,
// the D-6 … D window with late arrivals, states that only move forward, and ids that match hits.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dayDate } from "../../generator/src/calendar.ts";
import { World } from "../../generator/src/day.ts";
import { ORDER_FIELDS, PlanCache, buildSnapshot, money } from "../../generator/src/orders.ts";
import { DEFAULT_SEED, WORLD_STARTING_DAYS } from "../../generator/src/world.ts";
import { everyStartingDay, parseLines, readPassport } from "../../testkit/world/generator-fixtures.ts";

const MONEY = /^\d+\.\d{2}$/;
const TIME_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const cents = (s: unknown): number => Math.round(Number(s) * 100);

interface Row { order_id: string; status: string; created_at: string; updated_at: string; [key: string]: unknown }

const plans = new PlanCache(new World(DEFAULT_SEED));
const snapshots = Array.from({ length: WORLD_STARTING_DAYS + 2 }, (_, day) => buildSnapshot(plans, day));
const rowsOf = (day: number): Row[] => parseLines(snapshots[day]?.lines ?? []) as Row[];

describe("order snapshots", () => {
  it("hold exactly the 11 keys, well-formed and adding up: total = items_total - discount + delivery", () => {
    for (const snapshot of snapshots) {
      for (const row of rowsOf(snapshot.day)) {
        assert.deepEqual(Object.keys(row), [...ORDER_FIELDS]);
        for (const f of ["items_total", "discount", "delivery", "total"]) assert.match(row[f] as string, MONEY, f);
        assert.equal(cents(row.total), cents(row.items_total) - cents(row.discount) + cents(row.delivery), row.order_id);
        assert.match(row.created_at, TIME_MS);
        assert.match(row.updated_at, TIME_MS);
        assert.ok(row.updated_at >= row.created_at);
        assert.ok(["created", "paid", "cancelled"].includes(row.status));
        assert.ok(Number.isSafeInteger(row.user_id) && (row.user_id as number) > 0);
        const items = row.items as { sku: string; qty: number; price: string }[];
        assert.ok(items.length >= 1);
        for (const item of items) assert.deepEqual(Object.keys(item), ["sku", "qty", "price"]);
        const itemsTotal = items.reduce((sum, i) => sum + cents(i.price) * i.qty, 0);
        assert.equal(cents(row.items_total), itemsTotal, `${row.order_id} items_total`);
        assert.equal(row.snapshot_date, snapshot.date);
      }
    }
  });

  it("are sorted by order_id and keyed by it", () => {
    for (const snapshot of snapshots) {
      const ids = rowsOf(snapshot.day).map((r) => r.order_id);
      assert.deepEqual(ids, [...ids].sort());
      assert.deepEqual(snapshot.keys, ids);
      assert.equal(new Set(ids).size, ids.length);
    }
  });

  it("cover orders born D-6 … D (never before day 0), late ones joining up to two snapshots after birth", () => {
    for (const snapshot of snapshots) {
      const born = new Set(rowsOf(snapshot.day).map((r) => r.order_id.slice(0, 8)));
      for (const b of born) {
        const day = Math.round((Date.parse(`${b.slice(0, 4)}-${b.slice(4, 6)}-${b.slice(6)}`) - Date.parse("2026-06-01")) / 86_400_000);
        assert.ok(day >= Math.max(0, snapshot.day - 6) && day <= snapshot.day, `born ${b} in snapshot ${snapshot.date}`);
      }
    }
    const first = new Map<string, number>();
    for (const s of snapshots) for (const r of rowsOf(s.day)) if (!first.has(r.order_id)) first.set(r.order_id, s.day);
    const delays = [...first].map(([id, day]) => day - Math.round((Date.parse(`${id.slice(0, 4)}-${id.slice(4, 6)}-${id.slice(6, 8)}`) - Date.parse("2026-06-01")) / 86_400_000));
    assert.ok(delays.every((d) => d >= 0 && d <= 2));
    assert.ok(delays.some((d) => d > 0), "some orders arrive late");
  });

  it("move states only forward and close every order as paid or cancelled by its last snapshot", () => {
    const rank = { created: 0, paid: 1, cancelled: 2 } as Record<string, number>;
    const last = new Map<string, Row>();
    for (const s of snapshots) {
      for (const row of rowsOf(s.day)) {
        const before = last.get(row.order_id);
        if (before) {
          assert.ok((rank[row.status] ?? 0) >= (rank[before.status] ?? 0), `${row.order_id}: ${before.status} → ${row.status}`);
          assert.equal(row.created_at, before.created_at);
          assert.equal(row.total, before.total);
        }
        last.set(row.order_id, row);
      }
      // Orders born on D-6 leave the window after snapshot D: by then they must be settled.
      const closing = dayDate(s.day - 6).replaceAll("-", "");
      for (const row of rowsOf(s.day)) if (row.order_id.startsWith(closing)) assert.notEqual(row.status, "created", row.order_id);
    }
  });

  it("match the purchase hits: every order of a played day has its purchase, except lost ones", () => {
    const passport = readPassport();
    const purchased = new Set<string>();
    for (const day of everyStartingDay()) {
      for (const hit of parseLines(day.lines)) if (hit.EventType === "purchase") purchased.add((hit.purchaseID as string[])[0] ?? "");
    }
    const ordered = new Set(snapshots.slice(0, 7).flatMap((s) => rowsOf(s.day).map((r) => r.order_id)));
    const lost = [...ordered].filter((id) => !purchased.has(id)).length;
    const expectedLost = passport.days.slice(0, 7).reduce((sum, d) => sum + d.order_classes.lost_event, 0);
    assert.ok(lost <= expectedLost, `${lost} orders without a purchase hit, passport says at most ${expectedLost} lost`);
  });

  it("agree with the passport's per-snapshot counts", () => {
    for (const entry of readPassport().snapshots) {
      assert.equal(snapshots[entry.day]?.lines.length, entry.orders, `snapshot ${entry.date}`);
      assert.deepEqual(snapshots[entry.day]?.statuses, entry.statuses);
    }
  });

  it("format money in kopecks with exactly two decimals", () => {
    assert.equal(money(0), "0.00");
    assert.equal(money(5), "0.05");
    assert.equal(money(123_456), "1234.56");
    assert.throws(() => money(-1));
  });
});
