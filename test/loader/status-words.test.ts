// What a world wait prints about the loaders from their status rows: a fresh row as it is, a stale one
// (the process is gone: its heartbeat stopped) as DOWN with its last word as history, never as
// its current state (a dead loader was once read as "consuming" for five minutes). And when a
// request has been reached by a group of loaders: every live member there, a dead member not waited
// for (the others take its partitions), at least one member consuming.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeLoaders, describeLoaderStatus, groupReached, HEARTBEAT_STALE_MS, type LoaderStatus } from "../../src/loader/control.ts";

const row: LoaderStatus = { instance: "loader@box:28090", state: "consuming", generation: 6, pid: 14395, detail: "hits running", heartbeatAgeMs: 400 };
const second: LoaderStatus = { ...row, instance: "loader-2@box:28091", pid: 14400 };
const dead = (s: LoaderStatus): LoaderStatus => ({ ...s, heartbeatAgeMs: HEARTBEAT_STALE_MS + 300_000 });

describe("the loader's status in words", () => {
  it("a fresh row says what the loader does", () => {
    assert.equal(describeLoaderStatus(row), "loader@box:28090 pid 14395 consuming at generation 6 (hits running), last heard 0.4 s ago");
  });

  it("a stale row says DOWN, not consuming", () => {
    const said = describeLoaderStatus(dead(row));
    assert.match(said, /^loader@box:28090 DOWN: no heartbeat for 305 s/);
    assert.doesNotMatch(said, /pid \d+ consuming/);
    assert.match(said, /its last word, from pid 14395, was "consuming"/);
    assert.match(said, /make up starts it/);
  });

  it("a stale row whose last word is stopped says the process ended cleanly, not DOWN", () => {
    assert.match(describeLoaderStatus({ ...dead(row), state: "stopped" }), /^loader@box:28090 stopped \(its process ended cleanly 305 s ago\)$/);
  });

  it("no row at all says it never reported", () => {
    assert.match(describeLoaderStatus(undefined), /never reported/);
    assert.match(describeLoaders([]), /never reported/);
  });

  it("a group names how many are live, the live first", () => {
    const said = describeLoaders([dead(row), second]);
    assert.match(said, /^1 of 2 loaders live: loader-2@box:28091 pid 14400 consuming .*; loader@box:28090 DOWN/);
    assert.equal(describeLoaders([row]), describeLoaderStatus(row), "a lone loader reads as before");
  });
});

describe("a request reached by the group", () => {
  it("consuming: every live member at the request's generation, a dead member not waited for", () => {
    assert.deepEqual(groupReached([row, second], "consuming", 6), { done: true, live: [row, second] });
    assert.deepEqual(groupReached([row, dead(second)], "consuming", 6), { done: true, live: [row] });
    assert.deepEqual(groupReached([row, { ...second, generation: 5 }], "consuming", 6), { done: false }, "a live member still at an older request is waited for");
    assert.deepEqual(groupReached([row, { ...second, state: "starting" }], "consuming", 6), { done: false });
  });

  it("consuming with no live member is not reached; stopped is (a dead member holds nothing)", () => {
    assert.deepEqual(groupReached([dead(row)], "consuming", 6), { done: false });
    assert.deepEqual(groupReached([], "consuming", 6), { done: false });
    assert.deepEqual(groupReached([dead(row), dead(second)], "stopped", 6), { done: true, live: [] });
    const stopped = { ...row, state: "stopped" as const };
    assert.deepEqual(groupReached([stopped, { ...second, state: "stopped" }], "stopped", 6).done, true);
    assert.deepEqual(groupReached([stopped, second], "stopped", 6).done, false, "one member still consuming");
  });

  it("a live member failed at the request is named", () => {
    const failed = { ...second, state: "failed" as const };
    assert.deepEqual(groupReached([row, failed], "consuming", 6), { done: false, failed });
    assert.deepEqual(groupReached([row, { ...failed, generation: 5 }], "consuming", 6), { done: false }, "a failure of an older request is not this one's");
  });
});
