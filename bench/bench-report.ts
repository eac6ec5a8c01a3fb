// How the ingest benchmarks print: one Markdown table per figure (so a run's output pastes into the
// README as is), numbers formatted one way, and the machine's load beside them, because the
// machine is shared and a figure without its load cannot be compared with another run's.
import { cpus, loadavg } from "node:os";

export function printTable(title: string, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
  console.log(`\n${title}\n`);
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? `${"-".repeat(w + 2)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const row of rows) console.log(line(row));
  console.log("");
}

export function count(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-";
}

export function seconds(s: number, digits = 2): string {
  return Number.isFinite(s) ? s.toFixed(digits) : "-";
}

/** `ours / baseline` as "0.21x"; "-" when either is missing. */
export function ratio(ours: number, baseline: number): string {
  return Number.isFinite(ours) && Number.isFinite(baseline) && baseline !== 0 ? `${(ours / baseline).toFixed(2)}x` : "-";
}

export function machineLine(): string {
  return `node ${process.version}, ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}
