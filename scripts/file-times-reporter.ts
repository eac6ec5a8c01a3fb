// A node:test reporter that writes one JSON line per test file as its tests end: the file, the
// seconds its top-level tests and suites took (their hooks included), and how many passed, failed
// and were skipped. scripts/run-tests.sh gives it to each lane (--test-reporter=./scripts/
// file-times-reporter.ts); scripts/test-budget.ts reads the lines into the budget table.
import path from "node:path";

interface FileTimes {
  seconds: number;
  passed: number;
  failed: number;
  skipped: number;
}

interface TestEventData {
  file?: string;
  nesting?: number;
  skip?: unknown;
  todo?: unknown;
  details?: { duration_ms?: number; type?: string };
}

interface TestEvent {
  type: string;
  data?: TestEventData;
}

export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files = new Map<string, FileTimes>();
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const data = event.data;
    if (!data?.file) continue;
    const file = path.relative(process.cwd(), data.file);
    const times = files.get(file) ?? { seconds: 0, passed: 0, failed: 0, skipped: 0 };
    files.set(file, times);
    const isTest = data.details?.type !== "suite";
    if (isTest) {
      if (data.skip !== undefined && data.skip !== false) times.skipped += 1;
      else if (event.type === "test:pass") times.passed += 1;
      else times.failed += 1;
    }
    if (data.nesting === 0) times.seconds += (data.details?.duration_ms ?? 0) / 1000;
  }
  for (const [file, times] of [...files.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    yield `${JSON.stringify({ file, seconds: Number(times.seconds.toFixed(2)), passed: times.passed, failed: times.failed, skipped: times.skipped })}\n`;
  }
}
