// The passport loader: the real data/world-inventory.json passes; a malformed or self-contradicting
// passport is refused with a message naming the problem.
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadPassport, parsePassport, passportDays, PassportError } from "../../src/world/passport.ts";

test("data/world-inventory.json is a consistent passport of WORLD_STARTING_DAYS days", async () => {
  const passport = await loadPassport();
  assert.equal(passport.days.length, passport.WORLD_STARTING_DAYS);
  assert.equal(passport.days.reduce((s, d) => s + d.events, 0), passport.totals.events);
  assert.deepEqual(passportDays(passport, [0]).map((d) => d.date), [passport.dates[0]]);
  assert.throws(() => passportDays(passport, [99]), /no day 99/);
});

test("a passport whose parts do not add up is refused, naming the contradiction", async () => {
  const passport = structuredClone(await loadPassport());
  const day = passport.days[0];
  assert.ok(day);
  day.valid += 1;
  assert.throws(() => parsePassport(passport, "broken.json"), (err: unknown) => {
    assert.ok(err instanceof PassportError);
    assert.match(err.message, /broken\.json: is inconsistent: day 0: valid \d+ \+ invalid \d+ != events \d+/);
    return true;
  });
});

test("a passport missing a field is refused, naming the field", () => {
  assert.throws(() => parsePassport({ seed: 1 }, "empty.json"), /empty\.json: does not match the passport schema: .*WORLD_STARTING_DAYS/);
});
