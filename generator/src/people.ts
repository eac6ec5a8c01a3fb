// Who visits on a given day. People are born in daily cohorts; a person's whole visit schedule is
// drawn at birth from the cohort stream, so day D is found by scanning the cohorts D-28 … D and
// keeping those scheduled for D. Nothing is cached between days: every day stands on its own.
import { weekday } from "./calendar.ts";
import {
  AB_VARIANTS, DEVICE_CATEGORIES, DEVICE_DESKTOP, DEVICE_MOBILE, LANGUAGES, PLATFORMS, REGIONS, type Region,
} from "./reference-data.ts";
import { Rng } from "./rng.ts";
import {
  BUYER_PERCENT, Branch, JITTER_PERMILLE, NEWCOMERS_BASE, ONE_SHOT_PERCENT, RETURN_WINDOW_DAYS,
  TWO_COOKIE_BUYER_PERCENT, WEEKLY_PROFILE, type WorldSeed,
} from "./world.ts";

/** One browser of one person: everything a hit says about the device and place. */
export interface Cookie {
  readonly clientId: number;
  readonly deviceCategory: number;
  readonly os: string;
  readonly osRoot: string;
  readonly browser: string;
  readonly browserMajor: number;
  readonly language: string;
  readonly phoneModel: string;
  readonly screenWidth: number;
  readonly screenHeight: number;
  readonly ip: string;
  readonly region: Region;
  /** A/B experiment arm, or "" when the cookie is not enrolled. */
  readonly abVariant: string;
}

/** A person visiting on the day in question, with the rest of their draws ready. */
export interface Visitor {
  readonly birthDay: number;
  readonly person: number;
  readonly userId: number;
  readonly buyer: boolean;
  readonly cookies: readonly Cookie[];
}

/** Newcomers born on `day`: the base at the world's size, shaped by weekday, with a ±5% jitter of its own stream. */
export function cohortSize(world: WorldSeed, day: number): number {
  const jitter = new Rng(world.address(Branch.COHORT_SIZE, day)).below(2 * JITTER_PERMILLE + 1) - JITTER_PERMILLE;
  const profile = WEEKLY_PROFILE[weekday(day)] ?? 100;
  // integers all the way (below 2^53): the canonical size's per-mille of 1000 gives the canonical count exactly
  return Math.floor((NEWCOMERS_BASE * world.newcomersPermille * profile * (1000 + jitter)) / 100_000_000);
}

/** Days after birth on which the person visits again; empty for one-shot people. */
function drawReturnOffsets(rng: Rng): number[] {
  if (rng.chance(ONE_SHOT_PERCENT, 100)) return [];
  const returns = rng.between(1, 5);
  const offsets: number[] = [];
  for (let k = 0; k < returns; k++) {
    // The smaller of two draws: coming back soon is likelier than coming back late.
    const offset = Math.min(rng.between(1, RETURN_WINDOW_DAYS), rng.between(1, RETURN_WINDOW_DAYS));
    if (!offsets.includes(offset)) offsets.push(offset);
  }
  return offsets;
}

function drawCookie(rng: Rng, clientId: number, region: Region, deviceCategory: number): Cookie {
  const platform = PLATFORMS.get(deviceCategory)?.draw(rng);
  if (platform === undefined) throw new Error(`no platform for device ${deviceCategory}`);
  const [browser, newestMajor] = platform.browsers.draw(rng);
  const [screenWidth, screenHeight] = rng.pick(platform.screens);
  return {
    clientId,
    deviceCategory,
    os: platform.os,
    osRoot: platform.osRoot,
    browser,
    browserMajor: newestMajor - rng.below(3),
    language: LANGUAGES.draw(rng),
    phoneModel: rng.pick(platform.models),
    screenWidth,
    screenHeight,
    ip: `${region.ipPrefix}.${rng.between(1, 254)}.${rng.between(1, 254)}`,
    region,
    abVariant: rng.chance(1, 2) ? rng.pick(AB_VARIANTS) : "",
  };
}

/** Bit k set: the person visits k days after birth (bit 0, the birth day, is always set). */
function scheduleMask(offsets: readonly number[]): number {
  return offsets.reduce((mask, offset) => mask | (1 << offset), 1);
}

/**
 * Visit schedules of whole cohorts, memoised per process: a pure function of (seed, birth day),
 * kept only because a batch of N days would otherwise redraw each cohort up to 29 times.
 */
export class CohortSchedules {
  private readonly cohorts = new Map<number, Uint32Array>();

  constructor(private readonly world: WorldSeed) {}

  of(birthDay: number): Uint32Array {
    let masks = this.cohorts.get(birthDay);
    if (!masks) {
      masks = new Uint32Array(cohortSize(this.world, birthDay));
      for (let person = 0; person < masks.length; person++) {
        masks[person] = scheduleMask(drawReturnOffsets(new Rng(this.world.address(Branch.COHORT, birthDay, person))));
      }
      this.cohorts.set(birthDay, masks);
    }
    return masks;
  }
}

/**
 * The person born on `birthDay` at position `person`, known to visit today. The schedule comes
 * first in the person's stream; it is drawn again here only to reach the draws after it.
 */
function visitorAt(world: WorldSeed, birthDay: number, person: number): Visitor {
  const rng = new Rng(world.address(Branch.COHORT, birthDay, person));
  drawReturnOffsets(rng);
  const buyer = rng.chance(BUYER_PERCENT, 100);
  const twoCookies = buyer && rng.chance(TWO_COOKIE_BUYER_PERCENT, 100);
  const region = REGIONS.draw(rng);
  const firstDevice = DEVICE_CATEGORIES.draw(rng);
  const cookies = [drawCookie(rng, world.clientId(birthDay, person, 0), region, firstDevice)];
  if (twoCookies) {
    // The second browser is the other kind of screen: a phone next to a desktop, or the reverse.
    const secondDevice = firstDevice === DEVICE_DESKTOP ? DEVICE_MOBILE : DEVICE_DESKTOP;
    cookies.push(drawCookie(rng, world.clientId(birthDay, person, 1), region, secondDevice));
  }
  return { birthDay, person, userId: world.userId(birthDay, person), buyer, cookies };
}

/** Everyone who visits on `day`, oldest cohort first, in person order. */
export function visitorsOn(world: WorldSeed, schedules: CohortSchedules, day: number): Visitor[] {
  const visitors: Visitor[] = [];
  for (let birthDay = day - RETURN_WINDOW_DAYS; birthDay <= day; birthDay++) {
    const bit = 1 << (day - birthDay);
    const masks = schedules.of(birthDay);
    for (let person = 0; person < masks.length; person++) {
      if (((masks[person] ?? 0) & bit) !== 0) visitors.push(visitorAt(world, birthDay, person));
    }
  }
  return visitors;
}
