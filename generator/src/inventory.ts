// The world passports, data/world-inventory.json (the canonical world) and one per smaller size
// (data/world-inventory.<size>.json, WORLD_SIZES): for the starting days, how many hits each date
// holds (valid and invalid by kind), the orders of each snapshot, and a sha256 of every day's and
// every snapshot's bytes. The DAGs wait on its counts; tests regenerate it to catch any drift.
// `inventory --write` also exports the catalog CSV, which is a function of code (catalog.ts).
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { COUNTER_TIME_ZONE, START_DATE, dayDate } from "./calendar.ts";
import { buildCatalog, catalogCsv, sha256Hex } from "./catalog.ts";
import { World, generateDay, orderClassCounts, planDay, type DayPlan, type InvalidCounts } from "./day.ts";
import { orderClass, type OrderClass } from "./order-fate.ts";
import { PlanCache, buildSnapshot, type OrderStatus } from "./orders.ts";
import {
  DEFAULT_SEED, GENERATOR_VERSION, ORDER_CLASS_HORIZON_DAYS, ORDER_WINDOW_DAYS, WORLD_SIZE_NAMES, WORLD_STARTING_DAYS,
  inventoryPath, type WorldSize,
} from "./world.ts";

/** Repository root, where data/ lives; the inventory is a development command, never run in the image. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export { INVENTORY_PATH, inventoryPath } from "./world.ts";
export const CATALOG_PATH = "data/catalog/products.csv";

export interface PassportDay {
  day: number;
  date: string;
  events: number;
  valid: number;
  invalid: InvalidCounts;
  valid_by_type: Record<string, number>;
  orders_born: number;
  order_classes: Record<OrderClass, number>;
  sha256: string;
}

export interface PassportSnapshot {
  day: number;
  date: string;
  orders: number;
  statuses: Record<OrderStatus, number>;
  sha256: string;
}

/**
 * The reconciliation classes the generator planted among the orders born on one day: what
 * dm.purchase_vs_orders must show for that order day once it is closed (its last snapshot, day + 6,
 * was ingested). No order of a closed day is awaiting its backend record, so awaiting_order is 0.
 */
export interface PassportOrderClassDay {
  day: number;
  date: string;
  orders: number;
  classes: Record<OrderClass, number>;
}

export interface Passport {
  seed: number;
  size: WorldSize;
  generator_version: string;
  WORLD_STARTING_DAYS: number;
  start_date: string;
  counter_time_zone: string;
  order_window_days: number;
  dates: string[];
  catalog: { path: string; products: number; sha256: string };
  totals: { events: number; valid: number; invalid: number; invalid_by_kind: InvalidCounts; snapshot_orders: number };
  days: PassportDay[];
  snapshots: PassportSnapshot[];
  /** Planted classes per birth day for days 0 … horizon_days-1: the played world outgrows the starting days. */
  order_classes: { horizon_days: number; days: PassportOrderClassDay[] };
}

/** sha256 of lines written one per line with "\n" after each: the bytes of `--file` output. */
export function linesSha256(lines: readonly string[]): string {
  return sha256Hex(lines.length === 0 ? "" : `${lines.join("\n")}\n`);
}

/** Builds the passport from scratch: the starting days' hits and the snapshots 0 … STARTING_DAYS-2. */
export function buildPassport(seed = DEFAULT_SEED, size: WorldSize = "canonical"): Passport {
  const world = new World(seed, size);
  const plans = new PlanCache(world);
  const days: PassportDay[] = [];
  for (let day = 0; day < WORLD_STARTING_DAYS; day++) {
    const hits = generateDay(world, day);
    plans.put(hits.plan);
    days.push({
      day, date: hits.date, events: hits.counts.events, valid: hits.counts.valid, invalid: hits.counts.invalid,
      valid_by_type: hits.counts.byType, orders_born: hits.plan.purchases.length,
      order_classes: plannedClasses(hits.plan),
      sha256: linesSha256(hits.lines),
    });
  }
  // The day that plays day D sends snapshot D-1, so the starting world carries snapshots 0 … 6.
  const snapshots: PassportSnapshot[] = [];
  for (let day = 0; day < WORLD_STARTING_DAYS - 1; day++) {
    const s = buildSnapshot(plans, day);
    snapshots.push({ day, date: s.date, orders: s.lines.length, statuses: s.statuses, sha256: linesSha256(s.lines) });
  }
  const csv = catalogCsv(buildCatalog());
  const invalidByKind: InvalidCounts = { bad_timestamp: 0, unknown_event_type: 0, missing_id: 0 };
  for (const d of days) for (const [kind, n] of Object.entries(d.invalid)) invalidByKind[kind as keyof InvalidCounts] += n;
  return {
    seed, size, generator_version: GENERATOR_VERSION, WORLD_STARTING_DAYS, start_date: START_DATE,
    counter_time_zone: COUNTER_TIME_ZONE, order_window_days: ORDER_WINDOW_DAYS,
    dates: days.map((d) => dayDate(d.day)),
    catalog: { path: CATALOG_PATH, products: buildCatalog().length, sha256: sha256Hex(csv) },
    totals: {
      events: sum(days.map((d) => d.events)), valid: sum(days.map((d) => d.valid)),
      invalid: sum(Object.values(invalidByKind)), invalid_by_kind: invalidByKind,
      snapshot_orders: sum(snapshots.map((s) => s.orders)),
    },
    days, snapshots,
    order_classes: { horizon_days: ORDER_CLASS_HORIZON_DAYS, days: orderClassDays(world, plans) },
  };
}

function plannedClasses(plan: DayPlan): Record<OrderClass, number> {
  return orderClassCounts(plan, (p) => orderClass(p.fate ?? unreachable(p.orderId)));
}

/** Classes of days 0 … horizon-1; the starting days' plans are reused, later days planned without hits. */
function orderClassDays(world: World, plans: PlanCache): PassportOrderClassDay[] {
  const out: PassportOrderClassDay[] = [];
  for (let day = 0; day < ORDER_CLASS_HORIZON_DAYS; day++) {
    const plan = day < WORLD_STARTING_DAYS ? plans.get(day) : planDay(world, day);
    out.push({ day, date: dayDate(day), orders: plan.purchases.length, classes: plannedClasses(plan) });
  }
  return out;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function unreachable(orderId: string): never {
  throw new Error(`order ${orderId} has no fate`);
}

export function passportText(passport: Passport): string {
  return `${JSON.stringify(passport, null, 2)}\n`;
}

/** Writes the passport of every world size and the catalog CSV under `root`. */
export function writeInventory(root = REPO_ROOT, seed = DEFAULT_SEED): Passport[] {
  mkdirSync(path.join(root, path.dirname(CATALOG_PATH)), { recursive: true });
  writeFileSync(path.join(root, CATALOG_PATH), catalogCsv(buildCatalog()));
  return WORLD_SIZE_NAMES.map((size) => {
    const passport = buildPassport(seed, size);
    writeFileSync(path.join(root, inventoryPath(size)), passportText(passport));
    return passport;
  });
}

/** The passport's text per seed and size, built once per process (buildPassport is pure; a canonical one takes about 2 s). */
const builtTexts = new Map<string, string>();
function builtPassportText(seed: number, size: WorldSize): string {
  const key = `${seed} ${size}`;
  let text = builtTexts.get(key);
  if (text === undefined) {
    text = passportText(buildPassport(seed, size));
    builtTexts.set(key, text);
  }
  return text;
}

/** Differences between the files under `root` and what the code generates now (for these sizes); empty when in sync. */
export function checkInventory(root = REPO_ROOT, seed = DEFAULT_SEED, sizes: readonly WorldSize[] = WORLD_SIZE_NAMES): string[] {
  const problems: string[] = [];
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(path.join(root, file), "utf8");
    } catch {
      // an unreadable file is reported as missing, with the others, below
      problems.push(`${file} is missing`);
      return undefined;
    }
  };
  const csv = read(CATALOG_PATH);
  if (csv !== undefined && csv !== catalogCsv(buildCatalog())) problems.push(`${CATALOG_PATH} differs from the catalog in code`);
  for (const size of sizes) {
    const stored = read(inventoryPath(size));
    if (stored === undefined) continue;
    const expected = builtPassportText(seed, size);
    if (stored !== expected) problems.push(...describePassportDrift(inventoryPath(size), stored, expected));
  }
  return problems;
}

function describePassportDrift(file: string, stored: string, expected: string): string[] {
  const a = stored.split("\n");
  const b = expected.split("\n");
  const lines: string[] = [];
  for (let i = 0; i < Math.max(a.length, b.length) && lines.length < 12; i++) {
    if (a[i] !== b[i]) lines.push(`${file}:${i + 1}: file has ${a[i]?.trim() ?? "(nothing)"}, generator gives ${b[i]?.trim() ?? "(nothing)"}`);
  }
  return lines.length > 0 ? lines : [`${file} differs from what the generator gives`];
}
