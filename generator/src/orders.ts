// Order snapshots (topic `orders`): the backend's view of every order born on D-6 … D, as of the
// end of counter day D. A snapshot is a pure function of (seed, D): it replans the birth days,
// whose purchases carry the lines, and reads each order's fate to know its state at that moment.
import { dayDate, dayStartUtcMs, isoMillis } from "./calendar.ts";
import { planDay, type DayPlan, type World } from "./day.ts";
import { clientRevenueKopecks } from "./hit-format.ts";
import type { OrderFate } from "./order-fate.ts";
import type { CartLine, Purchase } from "./sessions.ts";
import { ORDER_WINDOW_DAYS } from "./world.ts";

export const ORDER_FIELDS = [
  "order_id", "user_id", "status", "created_at", "updated_at", "items_total", "discount", "delivery", "total", "items",
  "snapshot_date",
] as const;

export type OrderStatus = "created" | "paid" | "cancelled";

/** Kopecks as a non-negative string with exactly two decimals. */
export function money(kopecks: number): string {
  if (!Number.isSafeInteger(kopecks) || kopecks < 0) throw new RangeError(`bad money amount ${kopecks}`);
  return `${Math.floor(kopecks / 100)}.${String(kopecks % 100).padStart(2, "0")}`;
}

function lineValue(line: CartLine): number {
  return line.product.priceKopecks * line.qty;
}

interface Amounts {
  readonly lines: readonly CartLine[];
  readonly itemsTotal: number;
  readonly discount: number;
  readonly total: number;
}

/**
 * The backend's money. The discount is taken on the revenue the client saw; a struck line (class C)
 * lowers items_total and total by its full value but keeps the discount. When the drawn line would
 * push the total below zero, the cheapest line is struck instead, so money is never negative.
 */
export function orderAmounts(purchase: Purchase, fate: OrderFate): Amounts {
  const revenue = clientRevenueKopecks(purchase.lines);
  const discount = Math.floor((revenue * purchase.coupon.percent) / 100);
  let struck = fate.struckLine;
  if (struck >= 0) {
    const drawn = purchase.lines[struck];
    if (drawn && revenue - lineValue(drawn) < discount) {
      const values = purchase.lines.map(lineValue);
      struck = values.indexOf(Math.min(...values));
    }
  }
  const lines = purchase.lines.filter((_, i) => i !== struck);
  const itemsTotal = lines.reduce((sum, l) => sum + lineValue(l), 0);
  return { lines, itemsTotal, discount, total: itemsTotal - discount + fate.deliveryKopecks };
}

/** Status and last change of an order as of `asOfMs`; transitions after it have not happened yet. */
export function orderStateAt(fate: OrderFate, createdMs: number, asOfMs: number): { status: OrderStatus; updatedMs: number } {
  const payMs = createdMs + fate.payDelayMs;
  const cancelMs = createdMs + fate.cancelDelayMs;
  if (fate.path !== "paid" && cancelMs <= asOfMs) return { status: "cancelled", updatedMs: cancelMs };
  if (fate.path !== "unpaid_then_cancelled" && payMs <= asOfMs) return { status: "paid", updatedMs: payMs };
  return { status: "created", updatedMs: createdMs };
}

export function orderCreatedMs(bornDay: number, purchase: Purchase, fate: OrderFate): number {
  return dayStartUtcMs(bornDay) + purchase.event.second * 1000 + fate.createdMsOffset;
}

function fateOf(purchase: Purchase): OrderFate {
  if (!purchase.fate) throw new Error(`order ${purchase.orderId} has no fate`);
  return purchase.fate;
}

/** One order as the snapshot of `snapshotDay` shows it: exactly the 11 keys, in order. */
export function renderOrder(bornDay: number, purchase: Purchase, snapshotDay: number): string {
  const fate = fateOf(purchase);
  const createdMs = orderCreatedMs(bornDay, purchase, fate);
  const state = orderStateAt(fate, createdMs, dayStartUtcMs(snapshotDay + 1));
  const amounts = orderAmounts(purchase, fate);
  return JSON.stringify({
    order_id: purchase.orderId,
    user_id: purchase.userId,
    status: state.status,
    created_at: isoMillis(createdMs),
    updated_at: isoMillis(state.updatedMs),
    items_total: money(amounts.itemsTotal),
    discount: money(amounts.discount),
    delivery: money(fate.deliveryKopecks),
    total: money(amounts.total),
    items: amounts.lines.map((l) => ({ sku: l.product.sku, qty: l.qty, price: money(l.product.priceKopecks) })),
    snapshot_date: dayDate(snapshotDay),
  });
}

export interface Snapshot {
  readonly day: number;
  readonly date: string;
  /** One JSON document per order, sorted by order_id. */
  readonly lines: string[];
  /** Kafka key of each line: its order_id, so every version of an order shares a partition. */
  readonly keys: string[];
  readonly statuses: Record<OrderStatus, number>;
}

/** Plans of birth days, shared by the snapshots of one run (plans are read-only once built). */
export class PlanCache {
  private readonly plans = new Map<number, DayPlan>();
  constructor(private readonly world: World) {}
  /** Adopts a plan made elsewhere (generating a day's hits plans it anyway). */
  put(plan: DayPlan): void {
    this.plans.set(plan.day, plan);
  }
  get(day: number): DayPlan {
    let plan = this.plans.get(day);
    if (!plan) {
      plan = planDay(this.world, day);
      this.plans.set(day, plan);
    }
    return plan;
  }
}

/**
 * The snapshot of day D. The world starts on day 0, so no order is born before it: snapshot 0 holds
 * day 0's orders only. A late order (lateness δ) first shows δ snapshots after its birth.
 */
export function buildSnapshot(plans: PlanCache, day: number): Snapshot {
  const rows: { orderId: string; line: string }[] = [];
  const statuses: Record<OrderStatus, number> = { created: 0, paid: 0, cancelled: 0 };
  for (let born = Math.max(0, day - ORDER_WINDOW_DAYS + 1); born <= day; born++) {
    for (const purchase of plans.get(born).purchases) {
      if (day < born + fateOf(purchase).lateness) continue;
      const line = renderOrder(born, purchase, day);
      rows.push({ orderId: purchase.orderId, line });
      const fate = fateOf(purchase);
      statuses[orderStateAt(fate, orderCreatedMs(born, purchase, fate), dayStartUtcMs(day + 1)).status] += 1;
    }
  }
  rows.sort((a, b) => (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
  return { day, date: dayDate(day), lines: rows.map((r) => r.line), keys: rows.map((r) => r.orderId), statuses };
}
