// Plans one visitor's day: how many visits, where each comes from, which pages it walks through,
// what lands in the cart and whether it ends in a purchase. Navigation and timing draw from the
// TRAFFIC stream, product choices and purchases from the COMMERCE stream, both addressed by person.
import type { Product } from "./catalog.ts";
import type { Page, ShopPages } from "./pages.ts";
import type { Cookie, Visitor } from "./people.ts";
import {
  AD_CONTENTS, AD_TERMS, COUPONS, HOUR_WEIGHTS, TRAFFIC_SOURCES, type Coupon, type TrafficSource,
} from "./reference-data.ts";
import { Rng, WeightedList, weightTable } from "./rng.ts";
import { SECONDS_PER_DAY } from "./calendar.ts";
import { BUYER_PURCHASE_PERCENT, Branch, Component, type WorldSeed } from "./world.ts";
import type { OrderFate } from "./order-fate.ts";

export const EventKind = { PAGEVIEW: 0, ADD_TO_CART: 1, PURCHASE: 2 } as const;
export type EventKindCode = (typeof EventKind)[keyof typeof EventKind];

export interface CartLine {
  readonly product: Product;
  readonly qty: number;
}

/** A purchase as the visitor made it; the order number and fate are attached once the day is planned. */
export interface Purchase {
  readonly lines: readonly CartLine[];
  readonly coupon: Coupon;
  readonly userId: number;
  readonly clientId: number;
  /** The person browses from two cookies: their orders build identity pairs, so never lost or late. */
  readonly identityPair: boolean;
  /** The purchase event; its `second` is the moment of purchase. */
  event: PlannedEvent;
  orderId: string;
  fate: OrderFate | undefined;
}

export interface PlannedEvent {
  /** Seconds since the counter day began. */
  second: number;
  readonly kind: EventKindCode;
  /** The page; undefined for the order confirmation page, which is named after the order. */
  readonly page: Page | undefined;
  /** JSON literal of the referring URL. */
  readonly referer: string;
  readonly line: CartLine | undefined;
  /** On the purchase event and on the confirmation pageview. */
  readonly purchase: Purchase | undefined;
  readonly session: PlannedSession;
  /** A lost purchase event stays planned (its order keeps its number) but is not emitted. */
  dropped: boolean;
}

export interface PlannedSession {
  readonly cookie: Cookie;
  readonly source: TrafficSource;
  /** Hit fields 13-34 (UTM … RegionCityID) as JSON text between a leading and a trailing comma. */
  readonly visitFields: string;
  visitId: number;
  /** What every hit of the visit shares, made on its first rendered hit: fields 2-5, the Kafka key,
   *  ParsedParamsKey1 and the bytes that end a plain pageview. */
  rendered: { readonly ids: string; readonly key: string; readonly params: string; readonly pageviewTail: Buffer } | undefined;
  readonly events: PlannedEvent[];
}

const HOURS = weightTable(HOUR_WEIGHTS);
const PAGEVIEW_COUNTS = weightTable([30, 16, 12, 10, 8, 6, 5, 4, 3, 2, 2, 2]);
const LINE_COUNTS = weightTable([55, 25, 13, 7]);
const QUANTITIES = weightTable([80, 15, 5]);
const NEXT_PAGE = new WeightedList<"product" | "category" | "search" | "home" | "cart">([
  ["product", 50], ["category", 25], ["search", 10], ["home", 5], ["cart", 10],
]);
/** Visits of one cookie on one day are separated by more than the 30-minute sessionisation gap. */
const MIN_GAP_BETWEEN_VISITS = 1_801;

/** Shared, read-only inputs of a day's planning. */
export interface PlanContext {
  readonly world: WorldSeed;
  readonly day: number;
  readonly pages: ShopPages;
  readonly products: WeightedList<Product>;
}

/** Builds one visit's events in order; times are relative to the visit start until it is placed. */
class VisitBuilder {
  private t = 0;
  private current: Page | undefined;
  private currentReferer: string;

  constructor(
    readonly session: PlannedSession,
    private readonly traffic: Rng,
    firstReferer: string,
  ) {
    this.currentReferer = firstReferer;
  }

  view(page: Page | undefined, purchase?: Purchase): void {
    if (this.session.events.length > 0) this.t += 4 + this.traffic.below(60) + this.traffic.below(120);
    const referer = this.current ? this.current.url : this.currentReferer;
    this.push(EventKind.PAGEVIEW, page, referer, undefined, purchase);
    this.current = page;
    this.currentReferer = referer;
  }

  act(kind: EventKindCode, gapMin: number, gapMax: number, line?: CartLine, purchase?: Purchase): PlannedEvent {
    this.t += this.traffic.between(gapMin, gapMax);
    return this.push(kind, this.current, this.currentReferer, line, purchase);
  }

  get duration(): number {
    return this.t;
  }

  private push(kind: EventKindCode, page: Page | undefined, referer: string, line?: CartLine, purchase?: Purchase): PlannedEvent {
    const event: PlannedEvent = { second: this.t, kind, page, referer, line, purchase, session: this.session, dropped: false };
    this.session.events.push(event);
    return event;
  }
}

function visitFieldsJson(cookie: Cookie, source: TrafficSource, traffic: Rng): string {
  const campaign = traffic.pick(source.campaigns);
  const paid = source.lastTrafficSource === "ad";
  const content = paid ? traffic.pick(AD_CONTENTS) : "";
  const term = paid ? traffic.pick(AD_TERMS) : "";
  const yclid = source.yclid ? 1_000_000_000 + traffic.below(2_000_000_000) : 0;
  const r = cookie.region;
  return `,"UTMSource":"${source.utmSource}","UTMMedium":"${source.utmMedium}","UTMCampaign":"${campaign}",` +
    `"UTMContent":"${content}","UTMTerm":"${term}","LastTrafficSource":"${source.lastTrafficSource}",` +
    `"HasGCLID":${source.gclid ? 1 : 0},"YCLID":${yclid},"Browser":"${cookie.browser}",` +
    `"BrowserMajorVersion":${cookie.browserMajor},"BrowserLanguage":"${cookie.language}",` +
    `"OperatingSystem":"${cookie.os}","OperatingSystemRoot":"${cookie.osRoot}","DeviceCategory":${cookie.deviceCategory},` +
    `"MobilePhoneModel":"${cookie.phoneModel}","ScreenWidth":${cookie.screenWidth},"ScreenHeight":${cookie.screenHeight},` +
    `"IPAddress":"${cookie.ip}","RegionCountry":"${r.country}","RegionCity":"${r.city}",` +
    `"RegionCountryID":${r.countryId},"RegionCityID":${r.cityId},`;
}

function landingPage(ctx: PlanContext, source: TrafficSource, commerce: Rng): Page {
  if (source.landing === "home") return ctx.pages.home;
  const product = ctx.products.draw(commerce);
  return source.landing === "product" ? ctx.pages.product(product.sku) : ctx.pages.category(product.category);
}

/** Pageviews of browsing, with a small chance of a cart add on any product page. */
function browse(ctx: PlanContext, visit: VisitBuilder, traffic: Rng, commerce: Rng, pageviews: number): void {
  for (let n = 1; n < pageviews; n++) {
    const next = NEXT_PAGE.draw(traffic);
    if (next === "product") {
      const product = ctx.products.draw(commerce);
      visit.view(ctx.pages.product(product.sku));
      if (commerce.chance(7, 100)) visit.act(EventKind.ADD_TO_CART, 2, 25, { product, qty: 1 });
    } else if (next === "category") visit.view(traffic.pick(ctx.pages.categories));
    else if (next === "search") visit.view(traffic.pick(ctx.pages.searches));
    else if (next === "home") visit.view(ctx.pages.home);
    else visit.view(ctx.pages.cart);
  }
}

/** The buying path: product pages with cart adds, the cart, checkout, the purchase and its confirmation. */
function checkout(ctx: PlanContext, visit: VisitBuilder, commerce: Rng, visitor: Visitor): Purchase {
  const wanted = commerce.weighted(LINE_COUNTS) + 1;
  const lines: CartLine[] = [];
  for (let attempt = 0; attempt < wanted * 3 && lines.length < wanted; attempt++) {
    const product = ctx.products.draw(commerce);
    if (lines.some((l) => l.product.sku === product.sku)) continue;
    const line = { product, qty: commerce.weighted(QUANTITIES) + 1 };
    lines.push(line);
    visit.view(ctx.pages.product(product.sku));
    visit.act(EventKind.ADD_TO_CART, 2, 25, line);
  }
  const coupon = COUPONS.draw(commerce);
  visit.view(ctx.pages.cart);
  visit.view(ctx.pages.checkout);
  const purchase: Purchase = {
    lines, coupon, userId: visitor.userId, clientId: visit.session.cookie.clientId,
    identityPair: visitor.cookies.length > 1, event: undefined as unknown as PlannedEvent, orderId: "", fate: undefined,
  };
  purchase.event = visit.act(EventKind.PURCHASE, 10, 90, undefined, purchase);
  visit.view(undefined, purchase);
  return purchase;
}

/** Plans every visit of one visitor on ctx.day; returns them placed on the day's clock. */
export function planVisitorDay(ctx: PlanContext, visitor: Visitor): { sessions: PlannedSession[]; purchases: Purchase[] } {
  const base = ctx.world.address(Branch.DAY, ctx.day);
  const traffic = new Rng([...base, Component.TRAFFIC, visitor.birthDay, visitor.person]);
  const commerce = new Rng([...base, Component.COMMERCE, visitor.birthDay, visitor.person]);
  const cookie = visitor.cookies.length > 1 ? traffic.pick(visitor.cookies) : visitor.cookies[0];
  if (!cookie) throw new Error("visitor without a cookie");
  const visits = traffic.chance(15, 100) ? 2 : 1;
  const buyingVisit = visitor.buyer && commerce.chance(BUYER_PURCHASE_PERCENT, 100) ? visits - 1 : -1;
  const sessions: PlannedSession[] = [];
  const purchases: Purchase[] = [];
  let clock = traffic.weighted(HOURS) * 3600 + traffic.below(3600);
  for (let v = 0; v < visits; v++) {
    const source = TRAFFIC_SOURCES.draw(traffic);
    const session: PlannedSession = { cookie, source, visitFields: visitFieldsJson(cookie, source, traffic), visitId: 0, rendered: undefined, events: [] };
    const visit = new VisitBuilder(session, traffic, JSON.stringify(traffic.pick(source.referers)));
    visit.view(landingPage(ctx, source, commerce));
    browse(ctx, visit, traffic, commerce, traffic.weighted(PAGEVIEW_COUNTS) + 1);
    if (v === buyingVisit) purchases.push(checkout(ctx, visit, commerce, visitor));
    for (const event of session.events) event.second += clock;
    clock += visit.duration + MIN_GAP_BETWEEN_VISITS + traffic.below(4 * 3600);
    sessions.push(session);
  }
  placeWithinDay(sessions);
  return { sessions, purchases };
}

/** A day that would run past midnight is moved earlier as a whole, keeping every gap. */
function placeWithinDay(sessions: readonly PlannedSession[]): void {
  const last = sessions.at(-1)?.events.at(-1)?.second ?? 0;
  const overflow = last - (SECONDS_PER_DAY - 1);
  if (overflow <= 0) return;
  for (const session of sessions) for (const event of session.events) event.second -= overflow;
}
