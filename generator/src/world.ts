// The world's numbers and the layout of its random streams. Changing any value here changes the
// bytes of every day, so the passport (data/world-inventory.json) must be regenerated with it.
import { hashWords, permute52, seedWords } from "./rng.ts";

export const GENERATOR_VERSION = "0.1.0";
export const DEFAULT_SEED = 20_260_601;
export const WORLD_STARTING_DAYS = 8;
/** An order snapshot for day D holds the orders born on D-6 … D. */
export const ORDER_WINDOW_DAYS = 7;
/** Days whose planted order classes the passport records (a 30-day world closes days 0 … 22). */
export const ORDER_CLASS_HORIZON_DAYS = 60;

/** Newcomers per day before the weekly profile and jitter (the canonical world's). */
export const NEWCOMERS_BASE = 1_470;
/**
 * A world's size: its newcomers per day in per-mille of the canonical world's. A smaller world keeps
 * the first people of every canonical cohort and everything else (their visits, orders, invalid
 * hits) exactly as the canonical world draws them; each size has its own passport. `small` is the
 * test stands' world (docs/stand.md, "The test world"): the fewest people per day that still plant
 * every event type, invalid kind and order class in the starting days and reach both partitions.
 */
export const WORLD_SIZES = { canonical: 1000, small: 160 } as const;
export type WorldSize = keyof typeof WORLD_SIZES;
export const WORLD_SIZE_NAMES = Object.keys(WORLD_SIZES) as [WorldSize, ...WorldSize[]];

/** The canonical world's passport, relative to the repository root. */
export const INVENTORY_PATH = "data/world-inventory.json";
/** The passport of each world size, relative to the repository root. */
export function inventoryPath(size: WorldSize): string {
  return size === "canonical" ? INVENTORY_PATH : `data/world-inventory.${size}.json`;
}
/** Weekday multipliers in percent, Monday first. */
export const WEEKLY_PROFILE: readonly number[] = [105, 108, 107, 105, 95, 88, 92];
/** Day-to-day jitter of the newcomer count, in per-mille either way. */
export const JITTER_PERMILLE = 50;
/** Returning people come back within this many days of their first visit. */
export const RETURN_WINDOW_DAYS = 28;
export const ONE_SHOT_PERCENT = 75;
export const BUYER_PERCENT = 8;
/** Share of buyers who browse from two cookies (desktop and phone) under one person id. */
export const TWO_COOKIE_BUYER_PERCENT = 15;
/** Chance, per visit day of a buyer, that one of the day's sessions ends in a purchase. */
export const BUYER_PURCHASE_PERCENT = 38;
/** Share of hits made semantically invalid, in per-mille of pageviews. */
export const INVALID_PAGEVIEW_PERMILLE = 5;

/** Top-level branches of the stream tree. Positions, not names: never renumber, only append. */
export const Branch = { COHORT: 1, COHORT_SIZE: 2, DAY: 3, ID_KEYS: 4 } as const;
/** Components inside one day; slot 3 picks the invalid hits. */
export const Component = { TRAFFIC: 0, COMMERCE: 1, ORDERS: 2, QUALITY: 3 } as const;
/** Namespaces of the opaque ids, so a client id never equals a visit id by construction. */
export const IdTag = { CLIENT: 1, USER: 2, VISIT: 3, WATCH: 4 } as const;

const TWO_48 = 2 ** 48;
/** Days are stored offset so negative prehistory days stay non-negative inside ids. */
const DAY_OFFSET = 32_768;

/** The seed-dependent parts every stream address starts with. */
export class WorldSeed {
  readonly words: readonly [number, number];
  private readonly idKeys: ReadonlyMap<number, number>;

  /** Newcomers per day in per-mille of NEWCOMERS_BASE (WORLD_SIZES). */
  readonly newcomersPermille: number;

  constructor(
    readonly seed: number,
    readonly size: WorldSize = "canonical",
  ) {
    this.newcomersPermille = WORLD_SIZES[size];
    this.words = seedWords(seed);
    this.idKeys = new Map(Object.values(IdTag).map((tag) => [tag, hashWords(7, [...this.words, Branch.ID_KEYS, tag])]));
  }

  /** An address below this seed: [seed words, ...path]. */
  address(...path: number[]): number[] {
    return [this.words[0], this.words[1], ...path];
  }

  /** An opaque, unique, non-zero id below 2^53 for a structured payload (< 2^48) in one namespace. */
  opaqueId(tag: number, payload: number): number {
    if (payload < 0 || payload >= TWO_48 || !Number.isInteger(payload)) throw new RangeError(`id payload ${payload} out of range`);
    return 1 + permute52(tag * TWO_48 + payload, this.idKeys.get(tag) ?? 0);
  }

  clientId(birthDay: number, person: number, cookie: number): number {
    return this.opaqueId(IdTag.CLIENT, ((birthDay + DAY_OFFSET) * 65_536 + person) * 2 + cookie);
  }

  userId(birthDay: number, person: number): number {
    return this.opaqueId(IdTag.USER, (birthDay + DAY_OFFSET) * 65_536 + person);
  }

  visitId(day: number, session: number): number {
    return this.opaqueId(IdTag.VISIT, (day + DAY_OFFSET) * 2 ** 22 + session);
  }

  watchId(day: number, event: number): number {
    return this.opaqueId(IdTag.WATCH, (day + DAY_OFFSET) * 2 ** 24 + event);
  }
}
