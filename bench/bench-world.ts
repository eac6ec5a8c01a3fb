// What the benches that drive the test stand's world share: they refuse any other stand, and they
// run holding the world lock (no test changes the world under them) with the stand's runner up,
// stopping the runner (when they started it) and freeing the lock however they end.
import { standConfigPath } from "../src/config/index.ts";
import { takeWorldLock, useRunnerService } from "../testkit/index.ts";

export function isTestStand(): boolean {
  return /stand\.test\.yaml$/.test(standConfigPath());
}

/** Throws unless the stand config is the test stand's; `why` says what the bench would do to another. */
export function requireTestStand(why: string): void {
  if (!isTestStand()) throw new Error(`${why}: test stand only (STAND_CONFIG=test/stand.test.yaml), not ${standConfigPath()}`);
}

export async function withWorldLockAndRunner<T>(work: () => Promise<T>): Promise<T> {
  const lock = await takeWorldLock();
  const stopRunner = await useRunnerService();
  try {
    return await work();
  } finally {
    await stopRunner();
    await lock.release();
  }
}
