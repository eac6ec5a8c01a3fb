// Fixtures of the generator tests: the world passports on disk (data/world-inventory*.json) and the
// default seed's starting days, generated once per test file: every one in make test-full, in the
// gate day 0 and one more drawn from TEST_SEED (a day is generated alone exactly as in a batch:
// test/generator/determinism.test.ts), so any 7 consecutive seeds walk every day.
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../../src/config/index.ts";
import { matrixSettings } from "../matrix.ts";
import { World, generateDay, type DayHits, type Passport, DEFAULT_SEED, WORLD_STARTING_DAYS, inventoryPath, type WorldSize } from "../../generator/src/index.ts";

/** The passport of a world size as written on disk (canonical unless said). */
export function readPassport(size: WorldSize = "canonical"): Passport {
  return JSON.parse(readFileSync(path.join(repoRoot, inventoryPath(size)), "utf8")) as Passport;
}

let startingDays: DayHits[] | undefined;

/** Which starting days this run walks: all of them in the full tier; day 0 and one drawn from the seed in the gate. */
export function startingDayNumbers(): number[] {
  const { tier, seed } = matrixSettings();
  const all = Array.from({ length: WORLD_STARTING_DAYS }, (_, day) => day);
  if (tier === "full") return all;
  return [0, 1 + (seed % (WORLD_STARTING_DAYS - 1))];
}

/** The starting days of the default seed this run walks (startingDayNumbers), generated once per test file in one world. */
export function startingWorld(): DayHits[] {
  if (!startingDays) {
    const world = new World(DEFAULT_SEED);
    startingDays = startingDayNumbers().map((day) => generateDay(world, day));
  }
  return startingDays;
}

/** All 8 starting days, whatever the tier (for a claim about the whole starting world, such as every order's purchase hit). */
export function everyStartingDay(): DayHits[] {
  const world = new World(DEFAULT_SEED);
  return Array.from({ length: WORLD_STARTING_DAYS }, (_, day) => generateDay(world, day));
}

export function parseLines(lines: readonly string[]): Record<string, unknown>[] {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}
