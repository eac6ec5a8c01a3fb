// The hit wire contract (stand-facts §1): 47 keys in order, their JSON types, and the ecommerce
// columns filled only on add_to_cart (one product) and purchase (the whole order).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dayStartUtcMs } from "../../generator/src/calendar.ts";
import { HIT_FIELDS } from "../../generator/src/hit-format.ts";
import { classifyHit } from "../../generator/src/invalid.ts";
import { parseLines, startingWorld } from "../../testkit/world/generator-fixtures.ts";

const UINT_FIELDS = ["WatchID", "VisitID", "ClientID", "CounterID", "HasGCLID", "YCLID", "BrowserMajorVersion", "DeviceCategory",
  "ScreenWidth", "ScreenHeight", "RegionCountryID", "RegionCityID"] as const;
const STRING_FIELDS = ["EventDate", "UTCEventTime", "EventType", "URL", "Referer", "Title", "UTMSource", "UTMMedium", "UTMCampaign",
  "UTMContent", "UTMTerm", "LastTrafficSource", "Browser", "BrowserLanguage", "OperatingSystem", "OperatingSystemRoot",
  "MobilePhoneModel", "IPAddress", "RegionCountry", "RegionCity", "ecommerce"] as const;
const ARRAY_FIELDS: Record<string, "number" | "string"> = {
  GoalsReached: "number", ParsedParamsKey1: "string", purchaseID: "string", purchaseRevenue: "number", purchaseCurrency: "string",
  purchaseCoupon: "string", productID: "string", productName: "string", productCategory: "string", productPrice: "number",
  productQuantity: "number", productEventType: "string",
};
const PRODUCT_ARRAYS = ["productID", "productName", "productCategory", "productPrice", "productQuantity", "productEventType"];
const PURCHASE_ARRAYS = ["purchaseID", "purchaseRevenue", "purchaseCurrency", "purchaseCoupon"];

function assertTypes(hit: Record<string, unknown>): void {
  for (const f of UINT_FIELDS) assert.ok(Number.isSafeInteger(hit[f]) && (hit[f] as number) >= 0, `${f} = ${String(hit[f])}`);
  for (const f of STRING_FIELDS) assert.equal(typeof hit[f], "string", f);
  for (const [f, type] of Object.entries(ARRAY_FIELDS)) {
    const value = hit[f];
    assert.ok(Array.isArray(value), `${f} is an array`);
    for (const item of value as unknown[]) assert.equal(typeof item, type, `${f} item`);
  }
  assert.ok(Number.isInteger(hit.ClientTimeZone), "ClientTimeZone");
  assert.equal(hit.Sign, 1);
  for (const f of ["WatchID", "VisitID", "ClientID"]) assert.ok((hit[f] as number) > 0 && (hit[f] as number) < 2 ** 53, f);
}

function assertEcommerce(hit: Record<string, unknown>): void {
  const len = (f: string): number => (hit[f] as unknown[]).length;
  if (hit.EventType === "pageview") {
    for (const f of [...PRODUCT_ARRAYS, ...PURCHASE_ARRAYS]) assert.equal(len(f), 0, f);
    assert.equal(hit.ecommerce, "");
    return;
  }
  const products = len("productID");
  for (const f of PRODUCT_ARRAYS) assert.equal(len(f), products, `${f} parallel to productID`);
  const raw = JSON.parse(hit.ecommerce as string) as Record<string, unknown>;
  if (hit.EventType === "add_to_cart") {
    assert.equal(products, 1);
    for (const f of PURCHASE_ARRAYS) assert.equal(len(f), 0, f);
    assert.deepEqual(hit.GoalsReached, [3001]);
    assert.ok("add" in raw);
  } else {
    assert.ok(products >= 1);
    for (const f of PURCHASE_ARRAYS) assert.equal(len(f), 1, f);
    assert.match((hit.purchaseID as string[])[0] ?? "", /^\d{8}-\d{4}$/);
    const prices = hit.productPrice as number[];
    const qty = hit.productQuantity as number[];
    const revenue = prices.reduce((sum, p, i) => sum + p * (qty[i] ?? 0), 0);
    assert.equal((hit.purchaseRevenue as number[])[0], revenue, "revenue is the sum of the lines");
    assert.deepEqual(hit.GoalsReached, [3002]);
    assert.ok("purchase" in raw);
  }
}

describe("hit wire contract", () => {
  it("valid hits carry the 47 keys in order, typed, inside their counter day", () => {
    let checked = 0;
    for (const day of startingWorld()) {
      const start = dayStartUtcMs(day.day);
      for (const hit of parseLines(day.lines)) {
        assert.deepEqual(Object.keys(hit), [...HIT_FIELDS]);
        if (classifyHit(hit) !== "valid") continue;
        assertTypes(hit);
        assert.equal(hit.EventDate, day.date);
        const t = Date.parse(hit.UTCEventTime as string);
        assert.ok(t >= start && t < start + 86_400_000, `${String(hit.UTCEventTime)} outside day ${day.date}`);
        assertEcommerce(hit);
        if (hit.DeviceCategory === 1) assert.equal(hit.MobilePhoneModel, "");
        checked += 1;
      }
    }
    assert.ok(checked > 10_000 * startingWorld().length, `checked ${checked} valid hits over ${startingWorld().length} days`);
  });

  it("sorts each day's hits by time and starts day 0 at 2026-05-31T20:00Z (Samara, UTC+4)", () => {
    const [day0] = startingWorld();
    assert.ok(day0);
    assert.equal(new Date(dayStartUtcMs(0)).toISOString(), "2026-05-31T20:00:00.000Z");
    for (let i = 1; i < day0.seconds.length; i++) assert.ok((day0.seconds[i] ?? 0) >= (day0.seconds[i - 1] ?? 0));
  });

  it("keys every hit by its visitor's ClientID", () => {
    for (const day of startingWorld()) {
      day.lines.forEach((line, i) => {
        const client = /"ClientID":(\d+)/.exec(line)?.[1];
        if (client !== "0") assert.equal(day.keys[i], client);
      });
    }
  });

  it("keeps a cookie's visits of a day apart by more than 30 minutes and within a visit closer", () => {
    for (const day of startingWorld()) {
      const byClient = new Map<string, { visit: number; t: number }[]>();
      for (const hit of parseLines(day.lines)) {
        if (classifyHit(hit) !== "valid") continue;
        const list = byClient.get(String(hit.ClientID)) ?? [];
        list.push({ visit: hit.VisitID as number, t: Date.parse(hit.UTCEventTime as string) });
        byClient.set(String(hit.ClientID), list);
      }
      for (const [client, hits] of byClient) {
        for (let i = 1; i < hits.length; i++) {
          const [a, b] = [hits[i - 1], hits[i]];
          if (!a || !b) continue;
          const gap = (b.t - a.t) / 1000;
          if (a.visit === b.visit) assert.ok(gap <= 1800, `client ${client}: gap ${gap}s inside a visit`);
          else assert.ok(gap > 1800, `client ${client}: visits ${gap}s apart`);
        }
      }
    }
  });
});
