// Summarises the TAP reports of repeated rounds (scripts/repeat-tests.sh): per test, the rounds it
// failed and its time (min / median / max, seconds).
//   node --import tsx scripts/repeat-summary.ts test-output/repeat/round-*.tap
import { readFileSync } from "node:fs";

interface Seen {
  failures: number;
  seconds: number[];
}

const seen = new Map<string, Seen>();
for (const file of process.argv.slice(2)) {
  const lines = readFileSync(file, "utf8").split("\n");
  for (const [i, line] of lines.entries()) {
    const result = /^( {4,})(not ok|ok) \d+ - (.+?)(?: # .*)?$/.exec(line);
    if (!result?.[1] || !result[2] || !result[3]) continue; // tests only: suites and files sit at 0 and 2 spaces
    const indent = result[1].length;
    let seconds = Number.NaN;
    for (const next of lines.slice(i + 1, i + 8)) {
      const duration = new RegExp(`^ {${indent + 2}}duration_ms: ([\\d.]+)$`).exec(next);
      if (duration?.[1]) {
        seconds = Number(duration[1]) / 1000;
        break;
      }
    }
    const entry = seen.get(result[3]) ?? { failures: 0, seconds: [] };
    if (result[2] === "not ok") entry.failures++;
    if (!Number.isNaN(seconds)) entry.seconds.push(seconds);
    seen.set(result[3], entry);
  }
}
const fmt = (s: number | undefined) => (s === undefined ? "-" : s.toFixed(1));
console.log("  failed  runs   min / median / max s   test");
for (const [name, { failures, seconds }] of seen) {
  const sorted = [...seconds].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(`  ${String(failures).padStart(6)}  ${String(sorted.length).padStart(4)}  ${fmt(sorted[0]).padStart(6)} / ${fmt(median).padStart(6)} / ${fmt(sorted.at(-1)).padStart(6)}   ${name.slice(0, 110)}`);
}
