// Fault and rerun matrices, sampled from a seed. `make test` (the gate) runs each matrix's sample:
// as many points as its gate budget pays for at the point's measured cost; `make test-full` runs
// every point. Which points a seed draws: the matrix's points in a fixed order of their own (by a
// hash of the matrix name and each point's id, so adding a point does not reshuffle the others'
// neighbours much), and seed s takes the window of k points that starts at s·k, wrapping. So any
// ceil(n / k) consecutive seeds draw every point (test/structure/matrix-sample.test.ts proves it),
// and a red point is rerun alone with TEST_POINTS, whatever the seed.
//
//   TEST_SEED=<integer>     the seed (scripts/run-tests.sh draws one and prints it first)
//   TEST_TIER=gate|full     gate (the default) samples; full runs every point
//   TEST_POINTS=<m>=<id>[,<m>=<id>…]   exactly these points of the named matrices (a rerun)
import { createHash } from "node:crypto";
import { z } from "zod";
import { processEnv } from "../src/config/index.ts";

export type TestTier = "gate" | "full";

const envSchema = z.object({
  TEST_SEED: z
    .string()
    .regex(/^\d{1,9}$/, "TEST_SEED must be a whole number of at most 9 digits")
    .transform(Number)
    .optional(),
  TEST_TIER: z.enum(["gate", "full"], { message: "TEST_TIER must be gate or full" }).optional(),
  TEST_POINTS: z
    .string()
    .regex(/^[^=,]+=[^,]+(,[^=,]+=[^,]+)*$/, "TEST_POINTS must read matrix=point[,matrix=point…]")
    .optional(),
});

export interface MatrixSettings {
  seed: number;
  tier: TestTier;
  /** Points asked for by name, per matrix (TEST_POINTS). */
  pinned: ReadonlyMap<string, readonly string[]>;
}

/** The seed, tier and pinned points of this process, from its environment (checked; a bad value names its variable). */
export function matrixSettings(env: Record<string, string | undefined> = processEnv.testMatrix): MatrixSettings {
  const parsed = envSchema.safeParse({
    TEST_SEED: env.TEST_SEED || undefined,
    TEST_TIER: env.TEST_TIER || undefined,
    TEST_POINTS: env.TEST_POINTS || undefined,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`test matrix settings: ${problems}`);
  }
  const pinned = new Map<string, string[]>();
  for (const pair of parsed.data.TEST_POINTS?.split(",") ?? []) {
    const at = pair.indexOf("=");
    const name = pair.slice(0, at);
    pinned.set(name, [...(pinned.get(name) ?? []), pair.slice(at + 1)]);
  }
  // outside make test (a file run by hand) the seed is the day's, so two runs of one day agree
  const seed = parsed.data.TEST_SEED ?? Math.floor(Date.now() / 86_400_000);
  return { seed, tier: parsed.data.TEST_TIER ?? "gate", pinned };
}

/** The tier this process runs: gate (make test) or full (make test-full). */
export function testTier(): TestTier {
  return matrixSettings().tier;
}

export interface Matrix<P> {
  /** A stable name, unique across the suite (the rerun command names it). */
  name: string;
  /** The test file it is in, relative to the repository (the rerun command runs it). */
  file: string;
  points: readonly P[];
  /** A point's stable id: unique in the matrix, no ',' or '='. */
  id: (point: P) => string;
  /** What one point costs on the test stand, measured (seconds). */
  secondsPerPoint: number;
  /** What the gate spends on this matrix (seconds): the sample is as large as this pays for, at least 1. */
  gateSeconds: number;
}

export interface Sample<P> {
  matrix: Matrix<P>;
  points: P[];
  /** How they were chosen, in one line (printed by the test). */
  how: string;
  /** The command that reruns exactly one point of this matrix. */
  rerun: (point: P) => string;
  /** The command that reruns exactly this sample's points (for a test that judges them together). */
  rerunAll: string;
}

function orderKey(matrixName: string, id: string): string {
  return createHash("sha256").update(`${matrixName}\0${id}`).digest("hex");
}

/** How many points the gate runs of a matrix of n points. */
export function gateSampleSize(n: number, secondsPerPoint: number, gateSeconds: number): number {
  if (n === 0) return 0;
  return Math.min(n, Math.max(1, Math.floor(gateSeconds / Math.max(secondsPerPoint, 0.001))));
}

/** The points of `matrix` this process runs (see the head of this file). */
export function sampleMatrix<P>(matrix: Matrix<P>, settings: MatrixSettings = matrixSettings()): Sample<P> {
  const ids = matrix.points.map((p) => matrix.id(p));
  const seen = new Set<string>();
  for (const id of ids) {
    if (/[,=]/.test(id)) throw new Error(`matrix ${matrix.name}: point id '${id}' has ',' or '='`);
    if (seen.has(id)) throw new Error(`matrix ${matrix.name}: two points share the id '${id}'`);
    seen.add(id);
  }
  const rerunOf = (points: readonly P[]): string =>
    `TEST_SEED=${settings.seed} TEST_POINTS='${points.map((p) => `${matrix.name}=${matrix.id(p)}`).join(",")}' bash scripts/run-tests.sh ${matrix.file}`;
  const rerun = (point: P): string => rerunOf([point]);
  const wanted = settings.pinned.get(matrix.name);
  if (wanted) {
    const unknown = wanted.filter((id) => !seen.has(id));
    if (unknown.length > 0) throw new Error(`TEST_POINTS: matrix ${matrix.name} has no point ${unknown.join(", ")}; its points: ${ids.join(", ")}`);
    const points = matrix.points.filter((p) => wanted.includes(matrix.id(p)));
    return { matrix, points, how: `${wanted.length} pinned by TEST_POINTS`, rerun, rerunAll: rerunOf(points) };
  }
  const n = matrix.points.length;
  if (settings.tier === "full") return { matrix, points: [...matrix.points], how: `all ${n} (TEST_TIER=full)`, rerun, rerunAll: `TEST_TIER=full bash scripts/run-tests.sh ${matrix.file}` };
  const k = gateSampleSize(n, matrix.secondsPerPoint, matrix.gateSeconds);
  const ordered = matrix.points.map((p, i) => ({ p, key: orderKey(matrix.name, ids[i] ?? "") })).sort((a, b) => a.key.localeCompare(b.key));
  const start = (settings.seed * k) % n;
  const chosen = new Set<number>();
  for (let j = 0; j < k; j++) chosen.add((start + j) % n);
  // run in the matrix's own order (a step meets its boundaries in order), not the sample's
  const chosenPoints = new Set([...chosen].map((i) => ordered[i]?.p));
  const points = matrix.points.filter((p) => chosenPoints.has(p));
  return {
    matrix,
    points,
    how: `${k} of ${n} drawn by TEST_SEED=${settings.seed} (${matrix.gateSeconds} s of the gate at ${matrix.secondsPerPoint} s a point; TEST_TIER=full runs all)`,
    rerun,
    rerunAll: rerunOf(points),
  };
}

/** The same matrix over its points' ids: a seed draws the same ids from both (the sampler orders by id). */
export function byIds<P>(matrix: Matrix<P>): Matrix<string> {
  return { ...matrix, points: matrix.points.map((p) => matrix.id(p)), id: (id) => id };
}

/** How many consecutive seeds draw every point of a matrix in the gate (its coverage period). */
export function coveragePeriod(n: number, secondsPerPoint: number, gateSeconds: number): number {
  const k = gateSampleSize(n, secondsPerPoint, gateSeconds);
  return k === 0 ? 0 : Math.ceil(n / k);
}

/** Runs `body` for one point; when it fails, the error says which point and the one command that reruns it alone. */
export async function runPoint<P>(sample: Sample<P>, point: P, body: (point: P) => Promise<void>): Promise<void> {
  try {
    await body(point);
  } catch (err) {
    const id = sample.matrix.id(point);
    const rerun = sample.rerun(point);
    console.log(`matrix ${sample.matrix.name}: point ${id} is red; rerun it alone: ${rerun}`);
    const said = `[matrix ${sample.matrix.name}, point ${id}; rerun: ${rerun}]`;
    if (err instanceof Error) {
      err.message = `${said} ${err.message}`;
      throw err;
    }
    throw new Error(`${said} ${String(err)}`, { cause: err });
  }
}

/** Runs `body` for each sampled point, in order (runPoint: a red point names its rerun). */
export async function forEachPoint<P>(sample: Sample<P>, body: (point: P) => Promise<void>): Promise<void> {
  console.log(`matrix ${sample.matrix.name}: ${sample.how}: ${sample.points.map((p) => sample.matrix.id(p)).join(", ")}`);
  for (const point of sample.points) await runPoint(sample, point, body);
}

export interface SampledTests {
  /** Registers the test of one point when the sample holds it (its title names the point and the draw). */
  test: (point: string, title: string, body: () => Promise<void>) => void;
  /** Registers a further test of a point already given its test (a point that is several steps of
   * one story), on the same terms. */
  alsoTest: (point: string, title: string, body: () => Promise<void>) => void;
  /** Fails unless every point of the matrix was given a test (call once all are declared). */
  checkEveryPointHasATest: () => void;
}

/**
 * A matrix whose points are whole tests of a file (a fault each): the file declares a test per
 * point, and only the sampled ones are registered with node:test (make test-full registers all).
 * Nothing is skipped: a point not drawn is not a test of this run.
 */
export function sampledTests(sample: Sample<string>, register: (title: string, body: () => Promise<void>) => unknown): SampledTests {
  const declared = new Set<string>();
  const registerIfDrawn = (point: string, title: string, body: () => Promise<void>): void => {
    if (sample.points.includes(point)) void register(`${title} [${sample.matrix.name}=${point}; ${sample.how}]`, () => runPoint(sample, point, body));
  };
  return {
    test: (point, title, body) => {
      if (declared.has(point)) throw new Error(`matrix ${sample.matrix.name}: point ${point} has two tests`);
      declared.add(point);
      if (!sample.matrix.points.includes(point)) throw new Error(`matrix ${sample.matrix.name} has no point ${point}; its points: ${sample.matrix.points.join(", ")}`);
      registerIfDrawn(point, title, body);
    },
    alsoTest: (point, title, body) => {
      if (!declared.has(point)) throw new Error(`matrix ${sample.matrix.name}: point ${point} has no first test to follow`);
      registerIfDrawn(point, title, body);
    },
    checkEveryPointHasATest: () => {
      const missing = sample.matrix.points.filter((p) => !declared.has(p));
      if (missing.length > 0) throw new Error(`matrix ${sample.matrix.name}: no test for ${missing.join(", ")} (${sample.matrix.file})`);
    },
  };
}
