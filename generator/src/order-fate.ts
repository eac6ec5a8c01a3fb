// An order's fate is decided at its birth from the ORDERS stream of its birth day, addressed by
// the order's number: whether it gets paid or cancelled and when, whether the backend strikes a
// line, whether the purchase hit is lost or resent, and how many snapshots it arrives late.
import { Rng, WeightedList, weightTable } from "./rng.ts";
import { DELIVERY_FEES } from "./reference-data.ts";
import { Branch, Component, type WorldSeed } from "./world.ts";

export type FatePath = "paid" | "paid_then_cancelled" | "unpaid_then_cancelled";

/** Reconciliation class of an order, in the priority order a mart applies them. */
export type OrderClass = "cancelled" | "lost_event" | "duplicate_event" | "amount_delta" | "match";
export const ORDER_CLASSES: readonly OrderClass[] = ["match", "cancelled", "amount_delta", "lost_event", "duplicate_event"];

export interface OrderFate {
  readonly path: FatePath;
  /** Index of the line the backend strikes (class C), or -1. */
  readonly struckLine: number;
  /** The purchase hit never arrives, the confirmation pageview does (class B). */
  readonly lostEvent: boolean;
  /** A refresh resends the confirmation pageview and the purchase hit (class D). */
  readonly duplicateEvent: boolean;
  /** The order skips its first `lateness` snapshots. */
  readonly lateness: number;
  readonly deliveryKopecks: number;
  /** Milliseconds past the purchase second at which the backend created the order. */
  readonly createdMsOffset: number;
  /** Seconds between the confirmation page and its refresh (class D only). */
  readonly refreshDelaySeconds: number;
  /** Delays after creation, in ms: payment at the earlier moment, cancellation at the later one. */
  readonly payDelayMs: number;
  readonly cancelDelayMs: number;
}

const PATHS = new WeightedList<FatePath>([["paid", 95], ["paid_then_cancelled", 2], ["unpaid_then_cancelled", 3]]);
const LATENESS = weightTable([85, 10, 5]);
/** Hours 0 … 143 after creation: most payments come within the hour, the tail runs to six days. */
const MOMENT_HOURS = weightTable(Array.from({ length: 144 }, (_, h) => (h === 0 ? 6000 : h < 24 ? 150 : 144 - h)));

/** Draws in a fixed order whatever the outcome, so one draw never shifts another order's fate. */
export function drawOrderFate(world: WorldSeed, day: number, orderSeq: number, lineCount: number, identityPair: boolean): OrderFate {
  const rng = new Rng(world.address(Branch.DAY, day, Component.ORDERS, orderSeq));
  const path = PATHS.draw(rng);
  const strike = rng.chance(6, 100);
  const struckIndex = rng.below(Math.max(1, lineCount));
  const lost = rng.chance(2, 100);
  const duplicate = rng.chance(2, 100);
  const lateness = rng.weighted(LATENESS);
  const deliveryKopecks = DELIVERY_FEES.draw(rng);
  const createdMsOffset = rng.below(1000);
  const refreshDelaySeconds = rng.between(5, 60);
  const momentA = rng.weighted(MOMENT_HOURS) * 3_600_000 + rng.below(3_600_000);
  const momentB = rng.weighted(MOMENT_HOURS) * 3_600_000 + rng.below(3_600_000);
  const lostEvent = lost && !identityPair;
  return {
    path,
    struckLine: strike && lineCount > 1 ? struckIndex : -1,
    lostEvent,
    // A lost purchase cannot also be resent: the classes stay disjoint.
    duplicateEvent: duplicate && !lostEvent,
    lateness: identityPair ? 0 : lateness,
    deliveryKopecks,
    createdMsOffset,
    refreshDelaySeconds,
    payDelayMs: Math.min(momentA, momentB),
    cancelDelayMs: Math.max(momentA, momentB),
  };
}

export function orderClass(fate: OrderFate): OrderClass {
  if (fate.path !== "paid") return "cancelled";
  if (fate.lostEvent) return "lost_event";
  if (fate.duplicateEvent) return "duplicate_event";
  if (fate.struckLine >= 0) return "amount_delta";
  return "match";
}
