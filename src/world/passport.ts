// The world passport (data/world-inventory.json, or the small world's data/world-inventory.small.json
// on a stand whose world.size says so), read and checked with zod: the starting dates,
// the exact events per date (valid and invalid by kind) and the orders per snapshot day. The wait
// for ODS and the end-to-end tests compare against these numbers, so a malformed or internally
// inconsistent passport is refused here rather than turned into a wrong wait condition.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { WORLD_SIZE_NAMES, type WorldSize } from "../../generator/src/index.ts";
import { loadStandConfig } from "../config/index.ts";
import { passportPath } from "./constants.ts";
import { errorMessage } from "../errors.ts";

const count = z.number().int().min(0);
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be YYYY-MM-DD");

/** Invalid hits per kind, as the generator tags them (generator/src/invalid.ts). */
const invalidCounts = z.object({ bad_timestamp: count, unknown_event_type: count, missing_id: count });

const passportDay = z.object({
  day: count,
  date: isoDate,
  events: count,
  valid: count,
  invalid: invalidCounts,
});

const passportSnapshot = z.object({ day: count, date: isoDate, orders: count });

/** Reconciliation classes the generator planted among one day's orders (generator/src/order-fate.ts). */
export const PLANTED_ORDER_CLASSES = ["match", "cancelled", "amount_delta", "lost_event", "duplicate_event"] as const;
export type PlantedOrderClass = (typeof PLANTED_ORDER_CLASSES)[number];
const orderClassCounts = z.object({ match: count, cancelled: count, amount_delta: count, lost_event: count, duplicate_event: count }).strict();

const orderClassDay = z.object({ day: count, date: isoDate, orders: count, classes: orderClassCounts });

export const passportSchema = z.object({
  seed: z.number().int(),
  size: z.enum(WORLD_SIZE_NAMES),
  generator_version: z.string().min(1),
  WORLD_STARTING_DAYS: z.number().int().min(1),
  start_date: isoDate,
  /** An order snapshot for day D holds the orders born on D-(window-1) … D; day d closes with snapshot d+window-1. */
  order_window_days: z.number().int().min(1),
  dates: z.array(isoDate).min(1),
  totals: z.object({ events: count, valid: count, invalid: count, invalid_by_kind: invalidCounts }),
  days: z.array(passportDay).min(1),
  snapshots: z.array(passportSnapshot),
  order_classes: z.object({ horizon_days: count, days: z.array(orderClassDay) }),
});

export type Passport = z.infer<typeof passportSchema>;
export type PassportDay = Passport["days"][number];
export type InvalidKind = keyof PassportDay["invalid"];
export type PassportOrderClassDay = Passport["order_classes"]["days"][number];

export class PassportError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`world passport ${file}: ${message}`);
    this.name = "PassportError";
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** The sums the passport states must be the sums of its parts; returns the first contradiction. */
function findInconsistency(p: Passport): string | undefined {
  if (p.days.length !== p.WORLD_STARTING_DAYS) return `${p.days.length} days listed but WORLD_STARTING_DAYS is ${p.WORLD_STARTING_DAYS}`;
  const listedDates = p.days.map((d) => d.date).join(",");
  if (listedDates !== p.dates.join(",")) return `dates [${p.dates.join(", ")}] differ from the days' dates [${listedDates}]`;
  for (const d of p.days) {
    const invalid = sum(Object.values(d.invalid));
    if (d.valid + invalid !== d.events) return `day ${d.day}: valid ${d.valid} + invalid ${invalid} != events ${d.events}`;
  }
  if (sum(p.days.map((d) => d.events)) !== p.totals.events) return `totals.events ${p.totals.events} is not the sum of the days`;
  if (sum(p.days.map((d) => d.valid)) !== p.totals.valid) return `totals.valid ${p.totals.valid} is not the sum of the days`;
  if (p.totals.valid + p.totals.invalid !== p.totals.events) return "totals: valid + invalid != events";
  return findOrderClassInconsistency(p);
}

function findOrderClassInconsistency(p: Passport): string | undefined {
  const { horizon_days: horizon, days } = p.order_classes;
  if (days.length !== horizon) return `order_classes lists ${days.length} days but horizon_days is ${horizon}`;
  for (const [i, d] of days.entries()) {
    if (d.day !== i) return `order_classes.days[${i}] is day ${d.day}, expected day ${i}`;
    const planted = sum(Object.values(d.classes));
    if (planted !== d.orders) return `order_classes day ${d.day}: the classes sum to ${planted}, not to its ${d.orders} orders`;
  }
  return undefined;
}

/** Validates a parsed passport document; `file` names it in errors. */
export function parsePassport(raw: unknown, file: string): Passport {
  const result = passportSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new PassportError(file, `does not match the passport schema: ${problems}`);
  }
  const contradiction = findInconsistency(result.data);
  if (contradiction !== undefined) throw new PassportError(file, `is inconsistent: ${contradiction}`);
  return result.data;
}

/** The world size the stand plays (stand config world.size; canonical when absent). */
export function standWorldSize(): WorldSize {
  return loadStandConfig().world.size;
}

/**
 * Reads and validates the passport of the stand's world (world.size in its config), or `file`; the
 * stand's passport must say it is of that size.
 */
export async function loadPassport(file?: string): Promise<Passport> {
  if (file !== undefined) return readPassport(file);
  const size = standWorldSize();
  const passport = await readPassport(passportPath(size));
  if (passport.size !== size) {
    throw new PassportError(passportPath(size), `is the passport of the ${passport.size} world, but the stand plays the ${size} world (world.size): run the generator's inventory --write`);
  }
  return passport;
}

async function readPassport(file: string): Promise<Passport> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new PassportError(file, `cannot be read (${errorMessage(err)}); it is written by the generator's inventory --write`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new PassportError(file, `is not valid JSON: ${errorMessage(err)}`);
  }
  return parsePassport(raw, file);
}

/** The passport days with these day numbers (all days when omitted); unknown day numbers are refused. */
export function passportDays(passport: Passport, dayNumbers?: readonly number[]): PassportDay[] {
  if (dayNumbers === undefined) return [...passport.days];
  return dayNumbers.map((n) => {
    const day = passport.days.find((d) => d.day === n);
    if (!day) throw new Error(`the passport has no day ${n} (days ${passport.days[0]?.day}…${passport.days.at(-1)?.day})`);
    return day;
  });
}

export function invalidTotal(day: PassportDay): number {
  return sum(Object.values(day.invalid));
}
