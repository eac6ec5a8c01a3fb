// The loader micro-benchmark runs end to end on a few samples and counts what it measured.
import assert from "node:assert/strict";
import { test } from "node:test";
import { measureLoaderThroughput } from "../../bench/loader-throughput.ts";

test("measureLoaderThroughput: every message is measured, good ones as rows, bad ones as dead letters", async () => {
  const samples = [Buffer.from('{"WatchID":1,"URL":"https://x/"}'), Buffer.from('{"WatchID":2}'), Buffer.from("not json")];
  const report = await measureLoaderThroughput({ samples, messages: 3000, config: { flush: { maxRows: 500 } } });
  assert.deepEqual([report.messages, report.rowsLanded, report.deadLetters], [3000, 2000, 1000]);
  assert.ok(report.cpuMicrosPerMessage > 0 && report.messagesPerSecond > 0);
  assert.ok(report.lineBytesPerMessage > 60, `line bytes ${report.lineBytesPerMessage}`);
});
