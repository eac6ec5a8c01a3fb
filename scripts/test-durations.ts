// Prints the slowest top-level suites (one per file, mostly) of a TAP report written by node's test runner (scripts/run-tests.sh):
//   node --import tsx scripts/test-durations.ts [top] <report.tap> [more reports…]
// A file is a top-level subtest ("# Subtest: /path/x.test.ts" at column 0, its "duration_ms" two
// spaces in), so this reads only those lines.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const [topText = "12", ...reports] = process.argv.slice(2);
const top = Number(topText);
const lines = (reports.length > 0 ? reports : ["test-output/tests.tap"])
  .filter((file) => existsSync(file))
  .flatMap((file) => readFileSync(file, "utf8").split("\n"));
const durations: { name: string; seconds: number }[] = [];
let current: string | undefined;
for (const line of lines) {
  const subtest = /^# Subtest: (.+)$/.exec(line);
  if (subtest?.[1]) current = subtest[1];
  const duration = /^ {2}duration_ms: ([\d.]+)$/.exec(line);
  if (duration?.[1] && current !== undefined) {
    durations.push({ name: path.relative(process.cwd(), current), seconds: Number(duration[1]) / 1000 });
    current = undefined;
  }
}
durations.sort((a, b) => b.seconds - a.seconds);
const total = durations.reduce((sum, d) => sum + d.seconds, 0);
for (const d of durations.slice(0, top)) console.log(`  ${d.seconds.toFixed(1).padStart(7)} s  ${d.name}`);
console.log(`  ${total.toFixed(1).padStart(7)} s  in ${durations.length} files`);
