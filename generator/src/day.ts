// One counter day of hits, a pure function of (seed, day): plan every visitor's visits, number the
// day's purchases into orders and attach their fates, then lay all hits on the day's clock and
// render them. Lines come out sorted by time, the order a live run plays them in.
import { DayClock, SECONDS_PER_DAY } from "./calendar.ts";
import { buildCatalog, type Product } from "./catalog.ts";
import {
  EVENT_TYPES, ECOMMERCE_NONE, GOALS_CART, GOALS_NONE, GOALS_PURCHASE, cartEcommerce, hitHead, hitTail, purchaseEcommerce, visitIdsJson,
} from "./hit-format.ts";
import { DayQuality, INVALID_KINDS, UNKNOWN_EVENT_TYPES, badTimestamp, type InvalidKind } from "./invalid.ts";
import { drawOrderFate, type OrderClass } from "./order-fate.ts";
import { ShopPages } from "./pages.ts";
import { CohortSchedules, visitorsOn } from "./people.ts";
import { WeightedList } from "./rng.ts";
import { EventKind, planVisitorDay, type PlanContext, type PlannedEvent, type PlannedSession, type Purchase } from "./sessions.ts";
import { WorldSeed, type WorldSize } from "./world.ts";

/** Everything that is the same for all days of one seed. */
export class World {
  readonly seed: WorldSeed;
  readonly catalog: readonly Product[];
  readonly pages: ShopPages;
  readonly products: WeightedList<Product>;
  readonly schedules: CohortSchedules;

  constructor(seed: number, size: WorldSize = "canonical") {
    this.seed = new WorldSeed(seed, size);
    this.catalog = buildCatalog();
    this.pages = new ShopPages(this.catalog);
    this.products = new WeightedList(this.catalog.map((p) => [p, p.demand] as const));
    this.schedules = new CohortSchedules(this.seed);
  }
}

export interface DayPlan {
  readonly day: number;
  readonly clock: DayClock;
  readonly sessions: readonly PlannedSession[];
  /** Purchases in order-number order: purchases[n - 1] is order n of the day. */
  readonly purchases: readonly Purchase[];
}

export type InvalidCounts = Record<InvalidKind, number>;

export interface DayCounts {
  events: number;
  valid: number;
  invalid: InvalidCounts;
  /** Valid hits by event type. */
  byType: Record<(typeof EVENT_TYPES)[number], number>;
}

export interface DayHits {
  readonly day: number;
  readonly date: string;
  /** One JSON object per hit, without a trailing newline. */
  readonly lines: string[];
  /** Kafka key of each line: the ClientID of the visitor, so a client stays in one partition. */
  readonly keys: string[];
  /** Seconds since the counter day began, per line, for paced (live) playing. */
  readonly seconds: Uint32Array;
  readonly counts: DayCounts;
  readonly plan: DayPlan;
}

function orderIdOf(date: string, seq: number): string {
  return `${date.replaceAll("-", "")}-${String(seq).padStart(4, "0")}`;
}

/** Numbers purchases by time (plan order breaks ties), draws their fates, applies loss and resend. */
function settlePurchases(world: World, day: number, date: string, purchases: Purchase[]): void {
  purchases.sort((a, b) => a.event.second - b.event.second);
  purchases.forEach((purchase, index) => {
    const seq = index + 1;
    purchase.orderId = orderIdOf(date, seq);
    const fate = drawOrderFate(world.seed, day, seq, purchase.lines.length, purchase.identityPair);
    purchase.fate = fate;
    if (fate.lostEvent) purchase.event.dropped = true;
    if (fate.duplicateEvent) {
      const session = purchase.event.session;
      const confirmation = session.events.find((e) => e.kind === EventKind.PAGEVIEW && e.purchase === purchase);
      if (!confirmation) throw new Error(`order ${purchase.orderId} has no confirmation page`);
      const second = Math.min(SECONDS_PER_DAY - 1, confirmation.second + fate.refreshDelaySeconds);
      const resend = (kind: PlannedEvent["kind"]): PlannedEvent => ({ ...confirmation, kind, second, dropped: false });
      session.events.push(resend(EventKind.PAGEVIEW), resend(EventKind.PURCHASE));
    }
  });
}

/** Plans a day without rendering it: what order snapshots need. */
export function planDay(world: World, day: number): DayPlan {
  const ctx: PlanContext = { world: world.seed, day, pages: world.pages, products: world.products };
  const clock = new DayClock(day);
  const sessions: PlannedSession[] = [];
  const purchases: Purchase[] = [];
  for (const visitor of visitorsOn(world.seed, world.schedules, day)) {
    const planned = planVisitorDay(ctx, visitor);
    for (const session of planned.sessions) {
      session.visitId = world.seed.visitId(day, sessions.length);
      sessions.push(session);
    }
    purchases.push(...planned.purchases);
  }
  settlePurchases(world, day, clock.date, purchases);
  return { day, clock, sessions, purchases };
}

/** Emitted hits in time order; equal seconds keep the plan's order (a stable sort). */
function orderedEvents(plan: DayPlan): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  for (const session of plan.sessions) for (const event of session.events) if (!event.dropped) events.push(event);
  // Stable in every engine since ES2019, so ties keep the plan's order.
  return events.sort((a, b) => a.second - b.second);
}

function emptyCounts(): DayCounts {
  return {
    events: 0, valid: 0,
    invalid: Object.fromEntries(INVALID_KINDS.map((k) => [k, 0])) as InvalidCounts,
    byType: { pageview: 0, add_to_cart: 0, purchase: 0 },
  };
}

const TYPE_JSON = EVENT_TYPES.map((t) => `"${t}"`);

/** Tails of plain pageviews, one per A/B arm: most hits end in one of these few byte strings. */
const PAGEVIEW_TAILS = new Map<string, Buffer>();

function pageviewTail(params: string): Buffer {
  let tail = PAGEVIEW_TAILS.get(params);
  if (!tail) {
    tail = Buffer.from(hitTail(GOALS_NONE, params, ECOMMERCE_NONE), "utf8");
    PAGEVIEW_TAILS.set(params, tail);
  }
  return tail;
}

function renderedVisit(session: PlannedSession, date: string): NonNullable<PlannedSession["rendered"]> {
  const cookie = session.cookie;
  const params = cookie.abVariant ? `["${cookie.abVariant}"]` : "[]";
  return (session.rendered ??= {
    ids: visitIdsJson(session.visitId, cookie.clientId, date), key: String(cookie.clientId), params, pageviewTail: pageviewTail(params),
  });
}

/** Upper bound of one hit's bytes; the biggest (a four-line purchase) stays under 4 KB. */
export const MAX_HIT_BYTES = 16 * 1024;

/**
 * Writes the hit at `position` into `buf` at `offset` (at least MAX_HIT_BYTES must be free) and
 * returns the offset after it. A pageview may get a defect (never a confirmation page).
 */
function writeEvent(world: World, plan: DayPlan, quality: DayQuality, event: PlannedEvent, position: number, counts: DayCounts, buf: Buffer, offset: number): number {
  const session = event.session;
  const cookie = session.cookie;
  const page = event.page ?? world.pages.success(event.purchase?.orderId ?? "");
  const validTime = plan.clock.utcTime(event.second);
  const eligible = event.kind === EventKind.PAGEVIEW && event.purchase === undefined;
  const defect = eligible ? quality.defectAt(position) : undefined;
  counts.events += 1;
  if (defect) counts.invalid[defect.kind] += 1;
  else {
    counts.valid += 1;
    counts.byType[EVENT_TYPES[event.kind]] += 1;
  }
  const missing = defect?.kind === "missing_id";
  const rendered = renderedVisit(session, plan.clock.date);
  const ids = missing && defect.variant === 1 ? visitIdsJson(session.visitId, 0, plan.clock.date) : rendered.ids;
  const head = hitHead(
    missing && defect.variant !== 1 ? 0 : world.seed.watchId(plan.day, position),
    ids,
    defect?.kind === "bad_timestamp" ? JSON.stringify(badTimestamp(validTime, defect.variant)) : `"${validTime}"`,
    cookie.region.tzMinutes,
    defect?.kind === "unknown_event_type" ? `"${UNKNOWN_EVENT_TYPES[defect.variant] ?? "scroll"}"` : (TYPE_JSON[event.kind] ?? ""),
    page.url,
    event.referer,
    page.title,
  );
  let o = offset + buf.write(head, offset, "utf8");
  // The visit's fields are one string for all its hits: V8 flattens it on the first write, and
  // every later write of it is a plain copy.
  o += buf.write(session.visitFields, o, "utf8");
  const params = rendered.params;
  if (event.kind === EventKind.PAGEVIEW) {
    const tail = rendered.pageviewTail;
    buf.set(tail, o);
    return o + tail.length;
  }
  const tail = event.kind === EventKind.ADD_TO_CART && event.line
    ? hitTail(GOALS_CART, params, cartEcommerce(event.line))
    : hitTail(GOALS_PURCHASE, params, event.purchase ? purchaseEcommerce(event.purchase) : ECOMMERCE_NONE);
  const end = o + buf.write(tail, o, "utf8");
  if (end - offset >= MAX_HIT_BYTES) throw new Error(`hit ${position} of day ${plan.day} is larger than ${MAX_HIT_BYTES} bytes`);
  return end;
}

/**
 * Renders a planned day hit by hit, so a sender can turn lines into messages batch by batch and
 * let them die young instead of holding a whole day of strings (that cost more GC than rendering).
 */
export class DayRenderer {
  readonly plan: DayPlan;
  readonly date: string;
  readonly total: number;
  /** Counts of the hits rendered so far; complete once every position was rendered once, in order. */
  readonly counts: DayCounts = emptyCounts();
  private readonly events: PlannedEvent[];
  private readonly quality: DayQuality;
  private readonly scratch = Buffer.allocUnsafe(MAX_HIT_BYTES);

  constructor(
    private readonly world: World,
    readonly day: number,
  ) {
    this.plan = planDay(world, day);
    this.date = this.plan.clock.date;
    this.events = orderedEvents(this.plan);
    this.total = this.events.length;
    this.quality = new DayQuality(world.seed, day);
  }

  /** Writes the hit at `position` as UTF-8 JSON; MAX_HIT_BYTES must be free at `offset`. Returns the end offset. */
  write(position: number, buf: Buffer, offset: number): number {
    return writeEvent(this.world, this.plan, this.quality, this.event(position), position, this.counts, buf, offset);
  }

  /** The hit at `position` as a string (the same bytes as `write`, decoded). */
  line(position: number): string {
    const end = this.write(position, this.scratch, 0);
    return this.scratch.toString("utf8", 0, end);
  }

  /** Kafka key: the visitor's ClientID (even when the hit itself lost it), so a client stays in one partition. */
  key(position: number): string {
    return renderedVisit(this.event(position).session, this.date).key;
  }

  /** Seconds since the counter day began, for paced playing. */
  second(position: number): number {
    return this.event(position).second;
  }

  private event(position: number): PlannedEvent {
    const event = this.events[position];
    if (event === undefined) throw new RangeError(`day ${this.day} has no hit at ${position}`);
    return event;
  }
}

/** The whole day in memory: for tests, the passport and file output. */
export function generateDay(world: World, day: number, limit = Infinity): DayHits {
  const renderer = new DayRenderer(world, day);
  const total = Math.min(renderer.total, limit);
  const lines: string[] = new Array<string>(total);
  const keys: string[] = new Array<string>(total);
  const seconds = new Uint32Array(total);
  for (let position = 0; position < total; position++) {
    lines[position] = renderer.line(position);
    keys[position] = renderer.key(position);
    seconds[position] = renderer.second(position);
  }
  return { day, date: renderer.date, lines, keys, seconds, counts: renderer.counts, plan: renderer.plan };
}

/** Order classes of the orders born on the planned day, for the passport. */
export function orderClassCounts(plan: DayPlan, classify: (p: Purchase) => OrderClass): Record<OrderClass, number> {
  const counts: Record<OrderClass, number> = { match: 0, cancelled: 0, amount_delta: 0, lost_event: 0, duplicate_event: 0 };
  for (const purchase of plan.purchases) counts[classify(purchase)] += 1;
  return counts;
}
