// The comparisons behind check-clickhouse's world counts, kept apart from the queries so they read
// as the rules they are: what the passport says each layer must hold, per counter day.

export interface CheckResult {
  name: string;
  ok: boolean;
  expected: string;
  actual: string;
  /** How to read a red result (where the difference is), or what a green one covered. */
  detail: string;
}

export interface ExpectedDay {
  date: string;
  valid: number;
  /** Refused hits per reason, as the generator made them. */
  invalid: Record<string, number>;
  /** Valid hits per event type (pageview, add_to_cart, purchase), when the passport has them. */
  validByType?: Record<string, number>;
}

export interface Expectations {
  days: ExpectedDay[];
  /** The passport's newest order snapshot: its date, order count and statuses. */
  lastSnapshot?: { date: string; orders: number; statuses?: Record<string, number> };
}

type Count = string | number;

export interface DayCountRows {
  events?: { d: string; valid: Count; refused: Count }[];
  errors?: { d: string; error_class: string; refused: Count }[];
  sessions?: { d: string; sessions: Count; hits: Count }[];
  marts?: { d: string; funnel_pageviews: Count; funnel_cart_adds: Count; funnel_purchases: Count; traffic_pageviews: Count }[];
}

function byDay<Row extends { d: string }>(rows: readonly Row[] | undefined): Map<string, Row> {
  return new Map((rows ?? []).map((r) => [r.d, r]));
}

/** "a=1, b=2" over the keys where either side is non-zero (so a zero passport kind may be absent in ODS). */
function formatCounts(counts: Record<string, number>, keys: readonly string[]): string {
  return keys.map((k) => `${k}=${counts[k] ?? 0}`).join(", ") || "none";
}

function odsEventResults(expectations: Expectations, rows: DayCountRows["events"]): CheckResult[] {
  if (!rows) return [];
  const found = byDay(rows);
  const results: CheckResult[] = expectations.days.map((day) => {
    const row = found.get(day.date);
    const valid = Number(row?.valid ?? 0);
    const refused = Number(row?.refused ?? 0);
    const invalid = Object.values(day.invalid).reduce((a, b) => a + b, 0);
    const landed = valid + refused;
    const detail =
      valid === day.valid
        ? ""
        : `ODS holds ${valid} valid + ${refused} refused = ${landed} hits; the passport has ${day.valid} + ${invalid} = ${day.valid + invalid}. ` +
          (landed < day.valid + invalid
            ? `${day.valid + invalid - landed} hits never reached ODS (delivery: Kafka reader, Distributed queue)`
            : refused > invalid
              ? `${refused - invalid} valid hits were refused (parsing: see ods.event_errors)`
              : "more hits than the passport (a second world poured without deduplication?)");
    return { name: `ODS valid hits ${day.date}`, ok: valid === day.valid, expected: String(day.valid), actual: String(valid), detail };
  });
  const last = expectations.days.at(-1)?.date ?? "";
  const known = new Set(expectations.days.map((d) => d.date));
  // Days after the passport's last one are later world moves; a day inside its range is not.
  const stray = rows.map((r) => r.d).filter((d) => !known.has(d) && d <= last);
  results.push({
    name: "ODS holds no day outside the passport's range",
    ok: stray.length === 0,
    expected: "none",
    actual: stray.join(", ") || "none",
    detail: stray.length > 0 ? "ODS has days the passport does not list" : "",
  });
  return results;
}

function odsErrorResults(expectations: Expectations, rows: DayCountRows["errors"]): CheckResult[] {
  if (!rows) return [];
  return expectations.days.map((day) => {
    const actual: Record<string, number> = {};
    for (const r of rows.filter((row) => row.d === day.date)) actual[r.error_class] = Number(r.refused);
    const keys = [...new Set([...Object.keys(day.invalid), ...Object.keys(actual)])]
      .filter((k) => (day.invalid[k] ?? 0) > 0 || (actual[k] ?? 0) > 0)
      .sort();
    const ok = keys.every((k) => (day.invalid[k] ?? 0) === (actual[k] ?? 0));
    return { name: `ODS refused hits ${day.date}`, ok, expected: formatCounts(day.invalid, keys), actual: formatCounts(actual, keys), detail: "" };
  });
}

function sessionResults(expectations: Expectations, rows: DayCountRows["sessions"]): CheckResult[] {
  if (!rows) return [];
  const found = byDay(rows);
  return expectations.days.map((day) => {
    const row = found.get(day.date);
    const hits = Number(row?.hits ?? 0);
    return {
      name: `DDS sessions hold every valid hit ${day.date}`,
      ok: hits === day.valid,
      expected: `${day.valid} hits`,
      actual: `${hits} hits in ${Number(row?.sessions ?? 0)} sessions`,
      detail: row ? "" : "no sessions for this day: has etl_pipeline run?",
    };
  });
}

function martResults(expectations: Expectations, rows: DayCountRows["marts"]): CheckResult[] {
  if (!rows) return [];
  const found = byDay(rows);
  return expectations.days
    .filter((day) => day.validByType !== undefined)
    .map((day) => {
      const t = day.validByType ?? {};
      const row = found.get(day.date);
      const expected = `pageview=${t.pageview ?? 0}, add_to_cart=${t.add_to_cart ?? 0}, purchase=${t.purchase ?? 0}, traffic pageviews=${t.pageview ?? 0}`;
      const actual = row
        ? `pageview=${row.funnel_pageviews}, add_to_cart=${row.funnel_cart_adds}, purchase=${row.funnel_purchases}, traffic pageviews=${row.traffic_pageviews}`
        : "no mart rows";
      return { name: `DM funnel and traffic counts ${day.date}`, ok: actual === expected, expected, actual, detail: "" };
    });
}

/** Per passport day: ODS valid and refused hits, DDS session coverage, DM event counts. */
export function compareDayCounts(expectations: Expectations, rows: DayCountRows): CheckResult[] {
  return [
    ...odsEventResults(expectations, rows.events),
    ...odsErrorResults(expectations, rows.errors),
    ...sessionResults(expectations, rows.sessions),
    ...martResults(expectations, rows.marts),
  ];
}

/** The orders of the passport's newest snapshot: every one of them has that snapshot as its newest version in ODS. */
export function compareLatestSnapshot(expectations: Expectations, rows: readonly { snapshot: string; status: string; orders: Count }[]): CheckResult[] {
  const want = expectations.lastSnapshot;
  if (!want) return [];
  const name = `ODS orders of snapshot ${want.date}`;
  const newest = rows.map((r) => r.snapshot).sort().at(-1);
  if (newest !== undefined && newest > want.date) {
    return [{ name, ok: true, expected: `${want.orders} orders`, actual: `newest snapshot ${newest}`, detail: `not comparable: ODS holds snapshots after the passport's last (${want.date})` }];
  }
  const statuses: Record<string, number> = {};
  for (const r of rows.filter((row) => row.snapshot === want.date)) statuses[r.status] = Number(r.orders);
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  const keys = [...new Set([...Object.keys(want.statuses ?? {}), ...Object.keys(statuses)])].sort();
  const expected = `${want.orders} orders` + (want.statuses ? ` (${formatCounts(want.statuses, keys)})` : "");
  const actual = `${total} orders` + (want.statuses ? ` (${formatCounts(statuses, keys)})` : "");
  return [{ name, ok: expected === actual, expected, actual, detail: newest === undefined ? "ods.order is empty: has orders_ingest run?" : "" }];
}
