// world_recreate's drop waits out readonly replicas (a ZooKeeper session being restored) instead of
// dropping into them: 18.16 would unlink such a table's metadata, keep its data directory, and refuse
// every later DROP DATABASE ("Directory not empty"). The wait is shown here with a scripted probe;
// the probe itself is system.replicas on every node (tasks/databases.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { waitForWritableReplicas } from "../../tasks/databases.ts";
import { WorldTaskError } from "../../src/world/io.ts";

function io(readonlyWaitMs: number) {
  const lines: string[] = [];
  return { lines, input: { signal: new AbortController().signal, log: (line: string) => lines.push(line), readonlyWaitMs } };
}

describe("the drop waits for readonly replicas", () => {
  it("drops once the replicas are writable again, saying what it waited for", async () => {
    const answers = [["ch2 stg.dead_letters"], ["ch2 stg.dead_letters"], []];
    const { lines, input } = io(30_000);
    await waitForWritableReplicas(input, "stg", () => Promise.resolve(answers.shift() ?? []));
    assert.equal(answers.length, 0, "asked until no replica was readonly");
    assert.match(lines.join("\n"), /waiting for 1 readonly replica\(s\) of stg to reconnect to ZooKeeper before dropping it \(ch2 stg\.dead_letters; 0 s so far\)/);
  });

  it("does not wait when nothing is readonly", async () => {
    const { lines, input } = io(30_000);
    let asked = 0;
    await waitForWritableReplicas(input, "ods", () => (asked++, Promise.resolve([])));
    assert.equal(asked, 1);
    assert.deepEqual(lines, []);
  });

  it("fails at its deadline naming every readonly table and what to do", async () => {
    const { input } = io(1_200);
    await assert.rejects(waitForWritableReplicas(input, "stg", () => Promise.resolve(["ch1 stg.dead_letters", "ch2 stg.dead_letters"])), (err: unknown) => {
      assert.ok(err instanceof WorldTaskError);
      assert.match(err.message, /database stg not dropped: 2 replicated table\(s\) still readonly after \d+ s \(ch1 stg\.dead_letters, ch2 stg\.dead_letters\)/);
      assert.match(err.message, /Is ZooKeeper up \(make check-services\)\? Run world_recreate again/);
      return true;
    });
  });
});
