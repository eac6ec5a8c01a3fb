// The step DAGs' check that a played day is whole in ODS (tasks/hits-consumed.ts): the day
// is counted from the generator's own code, and a count that ODS does not hold makes the wait red.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { World, generateDay } from "../../generator/src/day.ts";
import { loadPassport } from "../../src/world/passport.ts";
import { WorldTaskError } from "../../src/world/io.ts";
import { playedDay, waitForHitsConsumed } from "../../tasks/hits-consumed.ts";
import { runUpCommand, useRunnerService } from "../../testkit/world/rest-world.ts";
import { takeWorldLock, type WorldLock } from "../../testkit/stand/world-lock.ts";

describe("playedDay: a day counted on its own", () => {
  it("gives the passport's counts for every starting day, and what playing the days in order gives after them", async () => {
    const passport = await loadPassport();
    for (const day of passport.days) {
      const counted = playedDay(passport.seed, day.day, passport.size);
      assert.deepEqual({ date: counted.date, valid: counted.valid, sent: counted.sent }, { date: day.date, valid: day.valid, sent: day.events }, `day ${day.day}`);
    }
    const world = new World(passport.seed, passport.size);
    for (let d = 0; d <= passport.WORLD_STARTING_DAYS + 2; d++) {
      const hits = generateDay(world, d);
      if (d < passport.WORLD_STARTING_DAYS) continue;
      const counted = playedDay(passport.seed, d, passport.size);
      assert.deepEqual([counted.date, counted.valid, counted.sent], [hits.date, hits.counts.valid, hits.lines.length], `day ${d} beyond the passport`);
    }
  });
});

describe("waitForHitsConsumed on the test stand's world", () => {
  let lock: WorldLock;
  let stopRunnerService: (() => Promise<void>) | undefined;
  const lines: string[] = [];
  const io = { signal: new AbortController().signal, log: (line: string): void => void lines.push(line) };

  before(async () => {
    lock = await takeWorldLock();
    stopRunnerService = await useRunnerService();
    const up = await runUpCommand(["up"]);
    assert.equal(up.code, 0, up.stdout + up.stderr);
  });

  after(async () => {
    try {
      await stopRunnerService?.();
    } finally {
      await lock.release();
    }
  });

  it("is green when ODS holds exactly the day's valid hits", async () => {
    const passport = await loadPassport();
    const day = playedDay(passport.seed, 0, passport.size);
    await waitForHitsConsumed(io, [day], 60_000, "hits-consumed test");
    assert.ok(lines.some((l) => l.includes(`${day.date}: ${day.valid} of ${day.valid} valid hits`)), lines.join("\n"));
  });

  it("is red, naming the date and both counts, when ODS does not hold what the day played", async () => {
    const passport = await loadPassport();
    const day = playedDay(passport.seed, 1, passport.size);
    const claimed = { ...day, valid: day.valid + 7 };
    await assert.rejects(waitForHitsConsumed(io, [claimed], 60_000, "hits-consumed test"), (err: unknown) => {
      assert.ok(err instanceof WorldTaskError);
      assert.match(err.message, new RegExp(`${day.date}: ${day.valid} of ${day.valid + 7} valid hits`));
      assert.match(err.message, /make rebuild-storage/);
      return true;
    });
  });
});
