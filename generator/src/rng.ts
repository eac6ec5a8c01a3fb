// Deterministic randomness for the world: a 32-bit xoshiro128** generator whose 128-bit state is
// derived from an address (seed, branch, day, ...). Every branch of the world draws from its own
// addressed stream, so one day, visitor or order can be regenerated without anything before it.
// Only integer draws: no floating point ever decides an outcome, so bytes are stable everywhere.

const TWO_32 = 0x1_0000_0000;

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** murmur3's finaliser: a cheap 32-bit avalanche. */
export function fmix32(input: number): number {
  let h = input | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hashes a list of 32-bit words on one lane; distinct lanes give independent hashes of one address. */
export function hashWords(lane: number, words: readonly number[]): number {
  let h = fmix32(0x9e3779b9 ^ Math.imul(lane + 1, 0x85ebca6b));
  for (const word of words) {
    let k = Math.imul(word | 0, 0xcc9e2d51);
    k = Math.imul(rotl(k, 15), 0x1b873593);
    h = Math.imul(rotl(h ^ k, 13), 5) + 0xe6546b64;
  }
  return fmix32(h ^ words.length);
}

/** A safe non-negative integer seed as two 32-bit words, so seeds above 2^32 stay distinct. */
export function seedWords(seed: number): [number, number] {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`seed must be a non-negative safe integer, got ${seed}`);
  return [seed % TWO_32 | 0, Math.floor(seed / TWO_32) | 0];
}

export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** A stream addressed by words; equal addresses give equal streams. */
  constructor(address: readonly number[]) {
    this.s0 = hashWords(0, address);
    this.s1 = hashWords(1, address);
    this.s2 = hashWords(2, address);
    this.s3 = hashWords(3, address);
    // xoshiro must not start from the all-zero state; the hashes make it unlikely, this makes it impossible.
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform integer in [0, n), unbiased by rejection; n at most 2^32. */
  below(n: number): number {
    if (!(n >= 1 && n <= TWO_32) || !Number.isInteger(n)) throw new RangeError(`below(${n})`);
    const limit = TWO_32 - (TWO_32 % n);
    let r = this.nextU32();
    while (r >= limit) r = this.nextU32();
    return r % n;
  }

  /** Uniform integer in [min, max], both inclusive. */
  between(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }

  /** True with probability num/den, decided by one integer draw. */
  chance(num: number, den: number): boolean {
    return this.below(den) < num;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.below(items.length)];
    if (item === undefined) throw new RangeError("pick from an empty list");
    return item;
  }

  /** Index drawn by integer weights, prepared once by cumulative(). */
  weighted(table: WeightTable): number {
    const r = this.below(table.total);
    const cum = table.cumulative;
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (r < (cum[mid] ?? 0)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

export interface WeightTable {
  readonly cumulative: Uint32Array;
  readonly total: number;
}

export function weightTable(weights: readonly number[]): WeightTable {
  const cumulative = new Uint32Array(weights.length);
  let total = 0;
  weights.forEach((w, i) => {
    if (!Number.isInteger(w) || w < 0) throw new RangeError(`weight ${w} must be a non-negative integer`);
    total += w;
    cumulative[i] = total;
  });
  if (total <= 0) throw new RangeError("weights sum to zero");
  return { cumulative, total };
}

/** Items paired with integer weights, drawn with one call. */
export class WeightedList<T> {
  private readonly table: WeightTable;
  constructor(private readonly entries: readonly (readonly [T, number])[]) {
    this.table = weightTable(entries.map(([, w]) => w));
  }
  draw(rng: Rng): T {
    const entry = this.entries[rng.weighted(this.table)];
    if (entry === undefined) throw new RangeError("empty weighted list");
    return entry[0];
  }
}

const HALF_BITS = 26;
const HALF = 1 << HALF_BITS;
const HALF_MASK = HALF - 1;

/**
 * A keyed bijection on [0, 2^52): a 4-round Feistel network. Ids built from structured positions
 * (day, visitor, event) go through it, so they look opaque yet can never collide.
 */
export function permute52(value: number, key: number): number {
  let left = Math.floor(value / HALF);
  let right = value % HALF;
  for (let round = 0; round < 4; round++) {
    const f = fmix32(right ^ Math.imul(key + round, 0x9e3779b1)) & HALF_MASK;
    const next = left ^ f;
    left = right;
    right = next;
  }
  return left * HALF + right;
}
