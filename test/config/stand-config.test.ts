// The stand config: its guard on fail points (the test stand may arm them, the user's stand.yaml may not), and its pools.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { collectPorts, ConfigError, instancesOf, parseStandConfig, repoRoot } from "../../src/config/stand.ts";

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

describe("pools in the stand config: runner.instances and loader.instances", () => {
  const text = readFileSync(userFile, "utf8");
  const scratch = path.join(repoRoot, "scratch.yaml");
  const withInstances = (runner: number, loader: number): string =>
    text.replace("  lease_seconds: 30\n", `  lease_seconds: 30\n  instances: ${runner}\n`).replace("  port: 28090\n", `  port: 28090\n  instances: ${loader}\n`);

  it("one of each when absent; instance k listens on the first's port + k - 1, named kind-k after the first", () => {
    const lone = parseStandConfig(text, scratch);
    assert.deepEqual(instancesOf(lone, "runner"), [{ kind: "runner", index: 1, name: "runner", port: 28080 }]);
    const pool = parseStandConfig(withInstances(3, 2), scratch);
    assert.deepEqual(instancesOf(pool, "runner").map((i) => `${i.name}:${i.port}`), ["runner:28080", "runner-2:28081", "runner-3:28082"]);
    assert.deepEqual(instancesOf(pool, "loader").map((i) => `${i.name}:${i.port}`), ["loader:28090", "loader-2:28091"]);
    assert.ok(collectPorts(pool).includes(28082) && collectPorts(pool).includes(28091), "every instance's port is the stand's");
  });

  it("an instance whose port another service has is refused, naming the port", () => {
    // the loaders' ports run 28090..28095: the keeper's 28095 is the sixth's
    assert.throws(() => parseStandConfig(withInstances(1, 6), scratch), (err: unknown) => err instanceof ConfigError && /port 28095 is used twice/.test(err.message));
    assert.throws(() => parseStandConfig(withInstances(0, 1), scratch), (err: unknown) => err instanceof ConfigError && /runner\.instances/.test(err.message));
  });
});
