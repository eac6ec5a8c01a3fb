// The frame of every test file that works on the test stand's world: the world lock (one such file
// at a time, across processes), the stand's own runner service (the world and world_position belong
// to it), the passport, and optionally a world made whole first. Registered as before/after hooks of
// the suite it is called in, so a file says what it needs in one line instead of repeating the hooks.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { loadPassport, type Passport } from "../src/world/passport.ts";
import { runUpCommand, useRunnerService } from "./rest-world.ts";
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
 * whole (a position without databases, a catalogue with tables gone), so it is rebuilt then. */
async function makeWorldWhole(): Promise<void> {
  const up = await runUpCommand(["up"]);
  if (up.code === 0) return;
  const rebuilt = await runUpCommand(["rebuild-storage"]);
  assert.equal(rebuilt.code, 0, rebuilt.stdout + rebuilt.stderr);
}
