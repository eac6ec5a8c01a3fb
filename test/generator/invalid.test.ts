// Invalid hits: every kind appears, each hit has exactly one defect, and the counts match the
// passport exactly (the DAG's wait condition and check-clickhouse rely on them).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { INVALID_KINDS, classifyHit, isStrictUtcTime } from "../../generator/src/invalid.ts";
import { parseLines, readPassport, startingWorld } from "../../testkit/world/generator-fixtures.ts";

describe("invalid hits", () => {
  it("are counted per day and kind exactly as the passport says", () => {
    const passport = readPassport();
    for (const day of startingWorld()) {
      const verdicts: Record<string, number> = {};
      for (const hit of parseLines(day.lines)) {
        const verdict = classifyHit(hit);
        verdicts[verdict] = (verdicts[verdict] ?? 0) + 1;
      }
      const entry = passport.days[day.day];
      assert.ok(entry, `passport has day ${day.day}`);
      assert.equal(verdicts.contract_violation, undefined, "no contract violations");
      assert.equal(verdicts.valid, entry.valid, `valid on ${day.date}`);
      for (const kind of INVALID_KINDS) assert.equal(verdicts[kind] ?? 0, entry.invalid[kind], `${kind} on ${day.date}`);
      assert.equal(day.lines.length, entry.events);
      assert.deepEqual(day.counts.invalid, entry.invalid);
    }
  });

  it("cover every kind and stay near half a percent of hits", () => {
    const passport = readPassport();
    for (const kind of INVALID_KINDS) assert.ok(passport.totals.invalid_by_kind[kind] > 0, kind);
    const share = passport.totals.invalid / passport.totals.events;
    assert.ok(share > 0.003 && share < 0.008, `invalid share ${share}`);
  });

  it("have exactly one defect each, only on ordinary pageviews", () => {
    for (const day of startingWorld()) {
      for (const hit of parseLines(day.lines)) {
        const verdict = classifyHit(hit);
        if (verdict === "valid") continue;
        const defects = [
          hit.WatchID === 0 || hit.ClientID === 0,
          !isStrictUtcTime(hit.UTCEventTime),
          !["pageview", "add_to_cart", "purchase"].includes(hit.EventType as string),
        ].filter(Boolean).length;
        assert.equal(defects, 1, `one defect: ${JSON.stringify(hit).slice(0, 200)}`);
        assert.equal(hit.ecommerce, "", "never a cart or purchase hit");
        assert.doesNotMatch(hit.URL as string, /checkout\/success/);
      }
    }
  });

  it("rejects look-alike times and accepts the strict form", () => {
    assert.ok(isStrictUtcTime("2026-06-01T12:00:00Z"));
    for (const bad of ["2026-06-01 12:00:00", "01/06/2026 12:00:00", "", "2026-06-31T12:00:00Z", "2026-06-01T24:00:00Z", 1, null]) {
      assert.ok(!isStrictUtcTime(bad), String(bad));
    }
  });
});
