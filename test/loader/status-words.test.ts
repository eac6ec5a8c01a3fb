// What a world wait prints about the loader from its status row: a fresh row as it is, a stale one
// (the process is gone: its heartbeat stopped) as DOWN with its last word as history, never as
// its current state (a dead loader was once read as "consuming" for five minutes).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeLoaderStatus, HEARTBEAT_STALE_MS } from "../../src/loader/control.ts";

const row = { state: "consuming" as const, generation: 6, pid: 14395, detail: "hits running", heartbeatAgeMs: 400 };

describe("the loader's status in words", () => {
  it("a fresh row says what the loader does", () => {
    assert.equal(describeLoaderStatus(row), "loader pid 14395 consuming at generation 6 (hits running), last heard 0.4 s ago");
  });

  it("a stale row says DOWN, not consuming", () => {
    const said = describeLoaderStatus({ ...row, heartbeatAgeMs: HEARTBEAT_STALE_MS + 300_000 });
    assert.match(said, /^loader DOWN: no heartbeat for 305 s/);
    assert.doesNotMatch(said, /^loader pid \d+ consuming/);
    assert.match(said, /its last word, from pid 14395, was "consuming"/);
    assert.match(said, /make up starts it/);
  });

  it("no row at all says it never reported", () => {
    assert.match(describeLoaderStatus(undefined), /never reported/);
  });
});
