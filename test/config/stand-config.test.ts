// The stand config's guard on fail points: the test stand may arm them, the user's stand.yaml may not.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ConfigError, parseStandConfig, repoRoot } from "../../src/config/stand.ts";

const userFile = path.join(repoRoot, "stand.yaml");
const testFile = path.join(repoRoot, "test/stand.test.yaml");

describe("fail points in the stand config", () => {
  it("the user's stand.yaml parses and arms none", () => {
    const config = parseStandConfig(readFileSync(userFile, "utf8"), userFile);
    assert.equal(config.runner.fail_points, undefined);
    assert.equal(config.loader.fail_points, undefined);
  });

  it("the test stand arms the runner's and the loader's", () => {
    const config = parseStandConfig(readFileSync(testFile, "utf8"), testFile);
    assert.equal(config.runner.fail_points, true);
    assert.equal(config.loader.fail_points, true);
  });

  for (const [section, anchor] of [
    ["runner", "  lease_seconds: 30\n"],
    ["loader", "  port: 28090\n"],
  ] as const) {
    it(`stand.yaml with ${section}.fail_points is refused, naming the field and where they belong`, () => {
      const text = readFileSync(userFile, "utf8");
      assert.ok(text.includes(anchor));
      const armed = text.replace(anchor, `${anchor}  fail_points: true\n`);
      assert.throws(
        () => parseStandConfig(armed, userFile),
        (err: unknown) => err instanceof ConfigError && err.message.includes(`${section}.fail_points`) && err.message.includes("test/stand.test.yaml"),
      );
      // the same text under another name (a scratch stand) is accepted
      assert.equal(parseStandConfig(armed, path.join(repoRoot, "scratch.yaml"))[section].fail_points, true);
    });
  }
});
