// Fixtures of the generator tests: the world passports on disk (data/world-inventory*.json) and the
// default seed's starting days, generated once per test file.
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../../src/config/index.ts";
import { World, generateDay, type DayHits, type Passport, DEFAULT_SEED, WORLD_STARTING_DAYS, inventoryPath, type WorldSize } from "../../generator/src/index.ts";

/** The passport of a world size as written on disk (canonical unless said). */
export function readPassport(size: WorldSize = "canonical"): Passport {
  return JSON.parse(readFileSync(path.join(repoRoot, inventoryPath(size)), "utf8")) as Passport;
}

let startingDays: DayHits[] | undefined;

/** The 8 starting days of the default seed, generated once per test file. */
export function startingWorld(): DayHits[] {
  if (!startingDays) {
    const world = new World(DEFAULT_SEED);
    startingDays = Array.from({ length: WORLD_STARTING_DAYS }, (_, day) => generateDay(world, day));
  }
  return startingDays;
}

export function parseLines(lines: readonly string[]): Record<string, unknown>[] {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}
