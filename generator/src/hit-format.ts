// The hit wire contract: 47 keys, always all present, always in this order; empty is "", 0 or [].
// Lines are built by concatenating pre-encoded fragments rather than JSON.stringify of an object,
// because serialisation is the generator's hottest loop (see bench/generator-bench.ts).
import type { CartLine, Purchase } from "./sessions.ts";
import { COUNTER_ID, GOAL_CART, GOAL_PURCHASE } from "./reference-data.ts";

export const HIT_FIELDS = [
  "WatchID", "VisitID", "ClientID", "CounterID", "EventDate", "UTCEventTime", "ClientTimeZone", "EventType", "Sign",
  "URL", "Referer", "Title", "UTMSource", "UTMMedium", "UTMCampaign", "UTMContent", "UTMTerm", "LastTrafficSource",
  "HasGCLID", "YCLID", "Browser", "BrowserMajorVersion", "BrowserLanguage", "OperatingSystem", "OperatingSystemRoot",
  "DeviceCategory", "MobilePhoneModel", "ScreenWidth", "ScreenHeight", "IPAddress", "RegionCountry", "RegionCity",
  "RegionCountryID", "RegionCityID", "GoalsReached", "ParsedParamsKey1", "purchaseID", "purchaseRevenue",
  "purchaseCurrency", "purchaseCoupon", "productID", "productName", "productCategory", "productPrice",
  "productQuantity", "productEventType", "ecommerce",
] as const;

export const EVENT_TYPES = ["pageview", "add_to_cart", "purchase"] as const;
export const CURRENCY = "RUB";

/*
 * A hit is written as three pieces: the head (fields 1-12), the visit's fields 13-34 (one string
 * shared by every hit of the visit, with its joining commas) and the tail (35-47). Writing them
 * one by one instead of flattening one long concatenated string halves the cost of a hit; the
 * visit's ids (fields 2-5) are likewise one string per visit.
 */

/** Fields 2-5 (VisitID … EventDate) with a leading comma. */
export function visitIdsJson(visitId: number, clientId: number, date: string): string {
  return `,"VisitID":${visitId},"ClientID":${clientId},"CounterID":${COUNTER_ID},"EventDate":"${date}"`;
}

/** Fields 1-12; `ids` from visitIdsJson, the other string arguments already JSON literals. */
export function hitHead(watchId: number, ids: string, time: string, tzMinutes: number, eventType: string, url: string, referer: string, title: string): string {
  return `{"WatchID":${watchId}${ids},"UTCEventTime":${time},"ClientTimeZone":${tzMinutes},"EventType":${eventType},` +
    `"Sign":1,"URL":${url},"Referer":${referer},"Title":${title}`;
}

export function hitTail(goals: string, params: string, ecommerce: string): string {
  return `"GoalsReached":${goals},"ParsedParamsKey1":${params},${ecommerce}}`;
}

export const GOALS_NONE = "[]";
export const GOALS_CART = `[${GOAL_CART}]`;
export const GOALS_PURCHASE = `[${GOAL_PURCHASE}]`;

export const ECOMMERCE_NONE =
  `"purchaseID":[],"purchaseRevenue":[],"purchaseCurrency":[],"purchaseCoupon":[],"productID":[],"productName":[],` +
  `"productCategory":[],"productPrice":[],"productQuantity":[],"productEventType":[],"ecommerce":""`;

/** Whole rubles of a catalog price (catalog prices are whole rubles by construction). */
function rubles(kopecks: number): number {
  return kopecks / 100;
}

function productArrays(lines: readonly CartLine[], eventType: string): string {
  const list = (f: (l: CartLine) => string | number): string => JSON.stringify(lines.map(f));
  return `"productID":${list((l) => l.product.sku)},"productName":${list((l) => l.product.name)},` +
    `"productCategory":${list((l) => l.product.category)},"productPrice":${list((l) => rubles(l.product.priceKopecks))},` +
    `"productQuantity":${list((l) => l.qty)},"productEventType":${list(() => eventType)}`;
}

function rawProducts(lines: readonly CartLine[]): object[] {
  return lines.map((l) => ({
    id: l.product.sku, name: l.product.name, category: l.product.category, price: rubles(l.product.priceKopecks), quantity: l.qty,
  }));
}

/** Ecommerce fields of an add_to_cart hit: one product, no purchase. */
export function cartEcommerce(line: CartLine): string {
  const raw = JSON.stringify({ currencyCode: CURRENCY, add: { products: rawProducts([line]) } });
  return `"purchaseID":[],"purchaseRevenue":[],"purchaseCurrency":[],"purchaseCoupon":[],` +
    `${productArrays([line], "add")},"ecommerce":${JSON.stringify(raw)}`;
}

/** Revenue as the client sees it: every line at catalog price, before coupon and delivery. */
export function clientRevenueKopecks(lines: readonly CartLine[]): number {
  return lines.reduce((sum, l) => sum + l.product.priceKopecks * l.qty, 0);
}

/** Ecommerce fields of a purchase hit: the whole order as the client placed it. */
export function purchaseEcommerce(purchase: Purchase): string {
  const revenue = rubles(clientRevenueKopecks(purchase.lines));
  const coupon = purchase.coupon.code;
  const raw = JSON.stringify({
    currencyCode: CURRENCY,
    purchase: { actionField: { id: purchase.orderId, revenue, coupon }, products: rawProducts(purchase.lines) },
  });
  return `"purchaseID":["${purchase.orderId}"],"purchaseRevenue":[${revenue}],"purchaseCurrency":["${CURRENCY}"],` +
    `"purchaseCoupon":${JSON.stringify([coupon])},${productArrays(purchase.lines, "purchase")},"ecommerce":${JSON.stringify(raw)}`;
}
