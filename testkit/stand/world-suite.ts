// The frame of every test file that works on the test stand's world: the world lock (one such file
// at a time, across processes), the stand's own runner service (the world and world_position belong
// to it), the passport, and optionally a world made whole first. Registered as before/after hooks of
// the suite it is called in, so a file says what it needs in one line instead of repeating the hooks.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { processEnv } from "../../src/config/index.ts";
import { SnapshotStore } from "../../src/snapshots/index.ts";
import { standContext } from "../../src/stand/index.ts";
import { loadPassport, type Passport } from "../../src/world/index.ts";
import { describeRun, runDag, runUpCommand, useRunnerService } from "../world/rest-world.ts";
import { takeWorldLock, type WorldLock } from "./world-lock.ts";

export interface WorldSuiteOptions {
  /**
   * Make the world whole before the suite: `make up` (world_initialize: a ready world is left as it
   * is), and when it refuses (a world that is not whole), `make rebuild-storage`.
   */
  wholeWorld?: boolean;
  /** Runs once the lock and the runner are taken, before the world is made whole (release what an
   * earlier process left armed here, or it would hold make up's runs) and before the tests. */
  setUp?: () => Promise<void>;
  /** Runs after the tests, before the runner is given back and the lock released (even when a test failed). */
  tearDown?: () => Promise<void>;
}

export interface WorldSuite {
  /** The world passport (data/world-inventory.json); read once the suite has started. */
  readonly passport: Passport;
}

/** Registers the world suite's hooks on the current suite (or file); returns what they load. */
export function useWorldSuite(options: WorldSuiteOptions = {}): WorldSuite {
  let lock: WorldLock | undefined;
  let stopRunnerService: (() => Promise<void>) | undefined;
  let passport: Passport | undefined;

  before(async () => {
    lock = await takeWorldLock();
    stopRunnerService = await useRunnerService();
    passport = await loadPassport();
    await options.setUp?.();
    if (options.wholeWorld) await makeWorldWhole();
  });

  after(async () => {
    try {
      await options.tearDown?.();
    } finally {
      try {
        await stopRunnerService?.();
      } finally {
        await lock?.release();
      }
    }
  });

  return {
    get passport(): Passport {
      if (!passport) throw new Error("useWorldSuite: the passport is read in the suite's before hook; use it inside a test");
      return passport;
    },
  };
}

/** The test stand's world is whatever the last test file left: make up refuses a world that is not
 * whole (a position without databases, a catalogue with tables gone), so the canonical world is put
 * back then. */
async function makeWorldWhole(): Promise<void> {
  const up = await runUpCommand(["up"]);
  if (up.code === 0) return;
  await restoreCanonicalWorld();
}

/**
 * The snapshot of the canonical world (a fresh world_recreate's) that world suites restore instead
 * of rebuilding: a restore takes about a third of a rebuild here. Taken once per make test run
 * (scripts/run-tests.sh exports TEST_WALL_STARTED), so it always holds today's code's world;
 * test/snapshots/world-snapshots.test.ts leaves it alone.
 */
export const CANONICAL_SNAPSHOT = "test-canonical";

/** Puts the canonical world in place: world_restore of CANONICAL_SNAPSHOT when this run saved one,
 * else world_recreate, then world_snapshot of the result for the next suite. Both through the DAGs. */
export async function restoreCanonicalWorld(log: (line: string) => void = console.log): Promise<void> {
  const ctx = standContext(() => undefined);
  const store = new SnapshotStore(ctx.config, ctx.paths);
  const runStarted = processEnv.testRunStartedMs ?? Number.POSITIVE_INFINITY; // outside a make test run: always rebuilt (and saved)
  const saved = store.list().find((s) => s.name === CANONICAL_SNAPSHOT);
  const fresh = saved?.manifest !== undefined && Date.parse(saved.manifest.takenAt) >= runStarted;
  if (fresh) {
    const restored = await runDag("world_restore", { name: CANONICAL_SNAPSHOT }, 600);
    if (restored.run.state === "success") {
      log(`canonical world restored from snapshot '${CANONICAL_SNAPSHOT}' in ${restored.seconds.toFixed(1)} s`);
      return;
    }
    log(`world_restore of '${CANONICAL_SNAPSHOT}' failed (${describeRun(restored)}); rebuilding instead`);
  }
  if (saved) store.remove(CANONICAL_SNAPSHOT); // of an earlier run (or unusable): today's is taken below
  const rebuilt = await runDag("world_recreate", {}, 900);
  assert.equal(rebuilt.run.state, "success", describeRun(rebuilt));
  const save = await runDag("world_snapshot", { name: CANONICAL_SNAPSHOT }, 600);
  assert.equal(save.run.state, "success", describeRun(save));
  log(`canonical world rebuilt in ${rebuilt.seconds.toFixed(1)} s and saved as '${CANONICAL_SNAPSHOT}' in ${save.seconds.toFixed(1)} s`);
}
