// Shared pieces of the loader tests: a seeded random source (so a failing interleaving can be
// replayed from its seed) and fake ClickHouse errors carrying real server codes.

/** mulberry32: a small, fast, seeded PRNG returning [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomInt(random: () => number, below: number): number {
  return Math.floor(random() * below);
}

/** An error shaped like @clickhouse/client's ClickHouseError for a server code. */
export function serverError(code: number): Error {
  return Object.assign(new Error(`Code: ${code}, e.displayText() = DB::Exception: fake`), { code: String(code) });
}
