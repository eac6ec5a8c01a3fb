// A small, hand-computable world for the ETL tests: two counter days (Samara, UTC+4), five cookies,
// three orders, a few refused hits. Every expected number below can be checked on paper.
//
//   A 1001 D1 10:00 pv, 10:10 cart, 11:00 pv, 11:20 purchase(20260601-0001)  → 2 sessions (50 min gap)
//   B 2002 D1 23:50 pv | D2 00:05 pv, 00:20 cart, 00:40 purchase(20260602-0001) → 1 + 1 (midnight splits)
//   C 3003 D1 12:00 pv, 12:30:00 pv (gap exactly 1800 s: same), 13:00:01 pv (1801 s: new) → 2
//   D 4004 D2 10:00 pv, 10:01 cart, 10:02 purchase(20260602-0002)                → 1
//   E 5005 D2 09:00 cart, 09:10 pv (a cart before any pageview: funnel level 1)   → 1
// Orders: 0001 paid (A, user 77), 20260602-0001 paid (B, user 88; created 20:40 UTC on D1, which
// is 00:40 on D2 in Samara), 20260602-0002 cancelled (D, user 77: A's second cookie).

export const D1 = "2026-06-01";
export const D2 = "2026-06-02";

/** Fixture rows were "loaded" long before any test run, so no day looks late. */
export const FIXTURE_LOAD_TS = "2026-06-03 00:00:00";

/** UTC 'YYYY-MM-DD HH:MM:SS' of a Samara wall-clock time (UTC+4 all year). */
export function samaraToUtc(date: string, time: string): string {
  const ms = Date.parse(`${date}T${time}Z`) - 4 * 3600_000;
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

type HitType = "pageview" | "add_to_cart" | "purchase";

interface Hit {
  id: number;
  client: number;
  date: string;
  time: string;
  type: HitType;
  url: string;
  utm?: string;
  order?: string;
}

export const HITS: readonly Hit[] = [
  { id: 1, client: 1001, date: D1, time: "10:00:00", type: "pageview", url: "/home", utm: "google" },
  { id: 2, client: 1001, date: D1, time: "10:10:00", type: "add_to_cart", url: "/p/home-001" },
  { id: 3, client: 1001, date: D1, time: "11:00:00", type: "pageview", url: "/catalog", utm: "yandex" },
  { id: 4, client: 1001, date: D1, time: "11:20:00", type: "purchase", url: "/thanks", order: "20260601-0001" },
  { id: 5, client: 2002, date: D1, time: "23:50:00", type: "pageview", url: "/home" },
  { id: 6, client: 2002, date: D2, time: "00:05:00", type: "pageview", url: "/home" },
  { id: 7, client: 2002, date: D2, time: "00:20:00", type: "add_to_cart", url: "/p/wear-001" },
  { id: 8, client: 2002, date: D2, time: "00:40:00", type: "purchase", url: "/thanks", order: "20260602-0001" },
  { id: 9, client: 3003, date: D1, time: "12:00:00", type: "pageview", url: "/a" },
  { id: 10, client: 3003, date: D1, time: "12:30:00", type: "pageview", url: "/b" },
  { id: 11, client: 3003, date: D1, time: "13:00:01", type: "pageview", url: "/c" },
  { id: 12, client: 4004, date: D2, time: "10:00:00", type: "pageview", url: "/home" },
  { id: 13, client: 4004, date: D2, time: "10:01:00", type: "add_to_cart", url: "/p/wear-001" },
  { id: 14, client: 4004, date: D2, time: "10:02:00", type: "purchase", url: "/thanks", order: "20260602-0002" },
  { id: 15, client: 5005, date: D2, time: "09:00:00", type: "add_to_cart", url: "/p/kids-001" },
  { id: 16, client: 5005, date: D2, time: "09:10:00", type: "pageview", url: "/kids" },
];

/** An ods.event row (JSONEachRow; omitted columns take their defaults). */
export function odsEventRow(hit: Hit, loadTs: string = FIXTURE_LOAD_TS): Record<string, unknown> {
  return {
    WatchID: hit.id,
    VisitID: hit.client * 100,
    ClientID: hit.client,
    CounterID: 1,
    EventDate: hit.date,
    UTCEventTime: samaraToUtc(hit.date, hit.time),
    EventType: hit.type,
    Sign: 1,
    URL: hit.url,
    UTMSource: hit.utm ?? "",
    DeviceCategory: 2,
    RegionCity: "Samara",
    purchaseID: hit.order ? [hit.order] : [],
    _load_ts: loadTs,
  };
}

interface OrderSpec {
  id: string;
  user: number;
  status: "created" | "paid" | "cancelled";
  createdUtc: string;
  items: { sku: string; qty: number; price: string }[];
  snapshot: string;
}

export const ORDERS: readonly OrderSpec[] = [
  {
    id: "20260601-0001", user: 77, status: "paid", createdUtc: "2026-06-01 07:20:00", snapshot: D1,
    items: [{ sku: "HOME-001", qty: 2, price: "1490.00" }, { sku: "TEXT-001", qty: 1, price: "500.00" }, { sku: "NOPE-001", qty: 1, price: "1.00" }],
  },
  { id: "20260602-0001", user: 88, status: "paid", createdUtc: "2026-06-01 20:40:00", snapshot: D2, items: [{ sku: "WEAR-001", qty: 3, price: "100.50" }] },
  { id: "20260602-0002", user: 77, status: "cancelled", createdUtc: "2026-06-02 06:02:00", snapshot: D2, items: [{ sku: "WEAR-001", qty: 1, price: "999.00" }] },
];

function itemsTotal(items: OrderSpec["items"]): string {
  const cents = items.reduce((sum, i) => sum + Math.round(Number(i.price) * 100) * i.qty, 0);
  return (cents / 100).toFixed(2);
}

/** An ods.order row as orders_ingest would store it. */
export function odsOrderRow(order: OrderSpec, overrides: Partial<OrderSpec> = {}): Record<string, unknown> {
  const o = { ...order, ...overrides };
  const total = itemsTotal(o.items);
  return {
    order_id: o.id,
    user_id: o.user,
    status: o.status,
    created_at: o.createdUtc,
    updated_at: o.createdUtc,
    // 18.16's JSONEachRow reads a Decimal only from a JSON number
    items_total: Number(total),
    discount: 0,
    delivery: 0,
    total: Number(total),
    items: JSON.stringify(o.items),
    snapshot_date: o.snapshot,
    _load_id: "fixture",
    _load_ts: FIXTURE_LOAD_TS,
  };
}

/** ods.event_errors rows: on D1 one missing_id hit landed twice (a replay) plus another, one bad timestamp; on D2 one unknown type. */
export const ERROR_ROWS: readonly Record<string, unknown>[] = [
  { error_class: "missing_id", WatchID: 0, ClientID: 0, VisitID: 1, EventDate: D1, UTCEventTime: "2026-06-01T06:00:00Z", EventType: "pageview", URL: "/x", _load_ts: FIXTURE_LOAD_TS },
  { error_class: "missing_id", WatchID: 0, ClientID: 0, VisitID: 1, EventDate: D1, UTCEventTime: "2026-06-01T06:00:00Z", EventType: "pageview", URL: "/x", _load_ts: "2026-06-03 00:05:00" },
  { error_class: "missing_id", WatchID: 901, ClientID: 0, VisitID: 2, EventDate: D1, UTCEventTime: "2026-06-01T07:00:00Z", EventType: "pageview", URL: "/y", _load_ts: FIXTURE_LOAD_TS },
  { error_class: "bad_timestamp", WatchID: 902, ClientID: 7, VisitID: 3, EventDate: D1, UTCEventTime: "2026-06-01 08:00:00", EventType: "pageview", URL: "/z", _load_ts: FIXTURE_LOAD_TS },
  { error_class: "unknown_event_type", WatchID: 903, ClientID: 8, VisitID: 4, EventDate: D2, UTCEventTime: "2026-06-02T08:00:00Z", EventType: "scroll", URL: "/w", _load_ts: FIXTURE_LOAD_TS },
];

/** Expected dds.session_v rows, by (client, started_at Samara). */
export const EXPECTED_SESSIONS = [
  // client, date, started, finished, duration, events, pageviews, carts, purchases, entry, exit, utm_source
  [1001, D1, `${D1} 10:00:00`, `${D1} 10:10:00`, 600, 2, 1, 1, 0, "/home", "/p/home-001", "google"],
  [1001, D1, `${D1} 11:00:00`, `${D1} 11:20:00`, 1200, 2, 1, 0, 1, "/catalog", "/thanks", "yandex"],
  [2002, D1, `${D1} 23:50:00`, `${D1} 23:50:00`, 0, 1, 1, 0, 0, "/home", "/home", ""],
  [2002, D2, `${D2} 00:05:00`, `${D2} 00:40:00`, 2100, 3, 1, 1, 1, "/home", "/thanks", ""],
  [3003, D1, `${D1} 12:00:00`, `${D1} 12:30:00`, 1800, 2, 2, 0, 0, "/a", "/b", ""],
  [3003, D1, `${D1} 13:00:01`, `${D1} 13:00:01`, 0, 1, 1, 0, 0, "/c", "/c", ""],
  [4004, D2, `${D2} 10:00:00`, `${D2} 10:02:00`, 120, 3, 1, 1, 1, "/home", "/thanks", ""],
  [5005, D2, `${D2} 09:00:00`, `${D2} 09:10:00`, 600, 2, 1, 1, 0, "/p/kids-001", "/kids", ""],
] as const;

/** dm.daily_funnel_v: date, visitors, viewed, carted, purchased, pageviews, cart_adds, purchases. */
export const EXPECTED_FUNNEL = [
  [D1, 3, 3, 1, 1, 6, 1, 1],
  [D2, 3, 3, 2, 2, 3, 3, 2],
] as const;

/** dm.daily_traffic_v: date, visitors, sessions, pageviews, known_users. */
export const EXPECTED_TRAFFIC = [
  [D1, 3, 5, 6, 2],
  [D2, 3, 3, 3, 2],
] as const;

/** dm.daily_revenue_v: date, category, orders, units, revenue, aov (paid orders only). */
export const EXPECTED_REVENUE = [
  [D1, "home", 1, 2, "2980.00", "2980.00"],
  [D1, "textile", 1, 1, "500.00", "500.00"],
  [D1, "unknown", 1, 1, "1.00", "1.00"],
  [D2, "apparel", 1, 3, "301.50", "301.50"],
] as const;

/** dm.daily_dq_errors_v: date, error_class, error_rows, distinct_errors (ods.event_errors read
 * merged: the replayed missing_id hit counts once in both). */
export const EXPECTED_DQ = [
  [D1, "bad_timestamp", 1, 1],
  [D1, "missing_id", 2, 2],
  [D2, "unknown_event_type", 1, 1],
] as const;

/** dds.identity_v pairs: client, user. */
export const EXPECTED_IDENTITY = [
  [1001, 77],
  [2002, 88],
  [4004, 77],
] as const;
