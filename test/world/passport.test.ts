// The passport loader: the real passports pass, each stand reads its world size's; a malformed or self-contradicting
// passport is refused with a message naming the problem.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../src/config/stand.ts";
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

// which passport a stand reads: its config's world.size, overridden by STAND_WORLD_SIZE (make bench)
function passportOfStand(env: Record<string, string>): string {
  const code = 'const m = await import("./src/world/passport.ts"); const p = await m.loadPassport(); console.log(p.size + " " + p.totals.events);';
  // passing the environment on to the child, not reading configuration from it
  // eslint-disable-next-line no-restricted-properties
  const childEnv = { ...process.env, ...env };
  const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: repoRoot, env: childEnv, encoding: "utf8" });
  return `${result.stdout.trim()}${result.status === 0 ? "" : ` exit ${result.status}: ${result.stderr}`}`;
}

test("a stand reads the passport of its world size; STAND_WORLD_SIZE overrides it and a bad value is refused, naming it", () => {
  const small = JSON.parse(readFileSync(path.join(repoRoot, "data/world-inventory.small.json"), "utf8")) as { totals: { events: number } };
  const canonical = JSON.parse(readFileSync(path.join(repoRoot, "data/world-inventory.json"), "utf8")) as { totals: { events: number } };
  assert.equal(passportOfStand({ STAND_CONFIG: "test/stand.test.yaml", STAND_WORLD_SIZE: "" }), `small ${small.totals.events}`);
  assert.equal(passportOfStand({ STAND_CONFIG: "stand.yaml", STAND_WORLD_SIZE: "" }), `canonical ${canonical.totals.events}`);
  assert.equal(passportOfStand({ STAND_CONFIG: "test/stand.test.yaml", STAND_WORLD_SIZE: "canonical" }), `canonical ${canonical.totals.events}`);
  assert.match(passportOfStand({ STAND_CONFIG: "test/stand.test.yaml", STAND_WORLD_SIZE: "huge" }), /exit 1: [\s\S]*STAND_WORLD_SIZE=huge: must be one of canonical, small/);
});
