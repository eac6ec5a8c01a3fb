// A node:test reporter that writes one JSON line per test file when the run ends: the file, the
// seconds its top-level tests and suites took (their hooks included), and how many tests passed,
// failed and were skipped. scripts/run-tests.sh gives it to each lane; scripts/test-lanes.ts reads
// the lines into the budget table and test/file-times.json. Plain JavaScript: node's test runner
// loads reporters before any loader hook (tsx) is in place.
import path from "node:path";
import process from "node:process";

/**
 * @param {AsyncIterable<{ type: string, data?: { file?: string, nesting?: number, skip?: unknown, details?: { duration_ms?: number, type?: string } } }>} source
 * @returns {AsyncGenerator<string>}
 */
export default async function* fileTimes(source) {
  /** @type {Map<string, { seconds: number, passed: number, failed: number, skipped: number }>} */
  const files = new Map();
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const data = event.data;
    if (!data?.file) continue;
    const file = path.relative(process.cwd(), data.file);
    const times = files.get(file) ?? { seconds: 0, passed: 0, failed: 0, skipped: 0 };
    files.set(file, times);
    if (data.details?.type !== "suite") {
      if (data.skip !== undefined && data.skip !== false) times.skipped += 1;
      else if (event.type === "test:pass") times.passed += 1;
      else times.failed += 1;
    }
    if (data.nesting === 0) times.seconds += (data.details?.duration_ms ?? 0) / 1000;
  }
  for (const [file, times] of [...files.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    yield `${JSON.stringify({ ...times, file, seconds: Number(times.seconds.toFixed(2)) })}\n`;
  }
}
