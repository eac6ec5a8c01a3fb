// A world wait that stops moving says why, and gives up at once on what cannot clear by itself
// (tasks/ingest-wait.ts's StallWatch, on a clock and findings of our own; the findings themselves
// are read from a real stand in test/faults/keeper-faults.test.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NonRetryableError } from "../../src/runner/errors.ts";
import type { Finding } from "../../src/stand/diagnose.ts";
import { StallWatch } from "../../tasks/ingest-wait.ts";

function watch(findings: Finding[]) {
  let t = 0;
  const lines: string[] = [];
  const w = new StallWatch(undefined, { now: () => t, findings: () => Promise.resolve(findings) });
  return { w, lines, log: (line: string) => lines.push(line), advance: (ms: number) => (t += ms) };
}

const down: Finding = { subject: "clickhouse-ch2", problem: "not running", fix: "make up", permanent: false };
const looping: Finding = { subject: "clickhouse-ch2", problem: "crash-looping: 5 quick deaths", fix: "read its log, then make up", permanent: true };

describe("a stalled world wait", () => {
  it("says nothing while it moves, and why once it has not moved for a minute, then once a minute", async () => {
    const { w, lines, log, advance } = watch([down]);
    for (let done = 0; done < 90; done += 10) {
      await w.look(done, log, "group g");
      advance(30_000);
    }
    assert.deepEqual(lines, [], "progress every 30 s is no stall");
    await w.look(90, log, "group g at 90 of 100");
    advance(59_000);
    await w.look(90, log, "group g at 90 of 100");
    assert.deepEqual(lines, []);
    advance(1000);
    await w.look(90, log, "group g at 90 of 100");
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? "", /no progress for 60 s \(group g at 90 of 100\); why: clickhouse-ch2: not running → make up/);
    advance(30_000);
    await w.look(90, log, "group g at 90 of 100");
    assert.equal(lines.length, 1, "said once a minute, not on every look");
    advance(30_000);
    await w.look(90, log, "group g at 90 of 100");
    assert.equal(lines.length, 2);
  });

  it("with nothing found, says so rather than guessing", async () => {
    const { w, lines, log, advance } = watch([]);
    await w.look(5, log, "g");
    advance(61_000);
    await w.look(5, log, "g");
    assert.match(lines[0] ?? "", /no stand service reports a problem/);
  });

  it("fails at once, not retried, when a finding cannot clear by itself", async () => {
    const { w, log, advance } = watch([down, looping]);
    await w.look(5, log, "g");
    advance(61_000);
    await assert.rejects(w.look(5, log, "g"), (err: unknown) => {
      assert.ok(err instanceof NonRetryableError, "not spent on the task's tries");
      assert.match(String(err), /cannot clear by itself: clickhouse-ch2: crash-looping/);
      assert.doesNotMatch(String(err), /not running/, "names only what will not clear");
      return true;
    });
  });
});
