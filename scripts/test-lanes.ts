// The stand lanes of `make test` and their budget (docs/stand.md, "Tests apart"):
//   plan   — splits the stand files between the test stands, longest first onto the lane with the
//            least time so far (LPT), by each file's time in test/file-times.json (measured here;
//            a file not in it counts as DEFAULT_SECONDS): prints one line per lane, files space-separated
//   budget — the table `make test` ends with: each lane's time and files, the slowest files, the
//            wall time, and a line when the wall time is over the budget
//   record — writes test/file-times.json from a run's per-file times (each file that did not fail
//            takes the run's figure): run it after a make test on this machine
//   derive — writes the second test stand's config: the test stand's, every port + 100, its own
//            state directory (.stand-test-b), so two lanes of world files run at once
//
//   node --import tsx scripts/test-lanes.ts plan --lanes 2 FILE…
//   node --import tsx scripts/test-lanes.ts budget --wall SECONDS --budget 600 LANE=TIMES.jsonl[=WALL]…
//   node --import tsx scripts/test-lanes.ts record TIMES.jsonl…
//   node --import tsx scripts/test-lanes.ts derive --out FILE
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { z } from "zod";
import { repoRoot } from "../src/config/index.ts";
import { shiftedStandConfigText } from "../testkit/index.ts";

const TIMES_FILE = path.join(repoRoot, "test", "file-times.json");
/** What an unmeasured stand file is taken to cost (seconds): a middling stand file here. */
export const DEFAULT_SECONDS = 20;

/** The second test stand: the test stand's ports + 100 (the user's + 200), clear of its pools' + 1 … + 8. */
export const SECOND_STAND_PORT_SHIFT = 100;
export const SECOND_STAND_STATE_DIR = ".stand-test-b";

const timesSchema = z.record(z.string(), z.number().min(0));
const lineSchema = z.object({ file: z.string(), seconds: z.number().min(0), passed: z.number(), failed: z.number(), skipped: z.number() });
export type FileTimes = z.infer<typeof lineSchema>;

export function readKnownTimes(file = TIMES_FILE): Record<string, number> {
  if (!existsSync(file)) return {};
  const parsed = timesSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`${path.relative(repoRoot, file)}: not a map of test file to seconds: ${parsed.error.issues[0]?.message ?? ""}`);
  return parsed.data;
}

/**
 * Longest first onto the least-loaded lane; ties keep the files' order. The files of `beside` run
 * beside a lane's others (test/stand-beside.txt), so they are balanced among themselves, after the
 * others. Lanes keep files in name order.
 */
export function planLanes(
  files: readonly string[],
  lanes: number,
  known: Record<string, number>,
  beside: ReadonlySet<string> = new Set(),
): { files: string[]; seconds: number; besideSeconds: number }[] {
  const cost = (f: string): number => known[f] ?? DEFAULT_SECONDS;
  const plan = Array.from({ length: lanes }, () => ({ files: [] as string[], seconds: 0, besideSeconds: 0 }));
  const longestFirst = (list: readonly string[]) => [...list].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b));
  for (const file of longestFirst(files.filter((f) => !beside.has(f)))) {
    const lane = plan.reduce((best, l) => (l.seconds < best.seconds ? l : best));
    lane.files.push(file);
    lane.seconds += cost(file);
  }
  for (const file of longestFirst(files.filter((f) => beside.has(f)))) {
    const lane = plan.reduce((best, l) => (l.besideSeconds < best.besideSeconds ? l : best));
    lane.files.push(file);
    lane.besideSeconds += cost(file);
  }
  for (const lane of plan) lane.files.sort();
  return plan;
}

/** The files a list file names (test/stand-beside.txt): one per line, # comments. */
export function readListFile(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}

export function readTimes(file: string): FileTimes[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => {
      const parsed = lineSchema.safeParse(JSON.parse(line));
      return parsed.success ? [parsed.data] : [];
    });
}

const minutes = (s: number): string => `${Math.floor(s / 60)} m ${String(Math.round(s % 60)).padStart(2, "0")} s`;

export function budgetTable(lanes: { name: string; times: FileTimes[]; wallSeconds?: number }[], wall: number, budget: number, top = 12): string[] {
  const out: string[] = ["== the budget: each lane, the slowest files, the wall time"];
  for (const lane of lanes) {
    const sum = lane.times.reduce((s, t) => s + t.seconds, 0);
    const counts = lane.times.reduce((c, t) => ({ passed: c.passed + t.passed, failed: c.failed + t.failed, skipped: c.skipped + t.skipped }), { passed: 0, failed: 0, skipped: 0 });
    const wallPart = lane.wallSeconds === undefined ? "" : `, ${minutes(lane.wallSeconds)} wall`;
    out.push(`   ${lane.name.padEnd(14)} ${String(lane.times.length).padStart(3)} files  ${minutes(sum).padStart(9)} in tests${wallPart}; ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
  const all = lanes.flatMap((l) => l.times.map((t) => ({ ...t, lane: l.name }))).sort((a, b) => b.seconds - a.seconds);
  out.push(`   the ${Math.min(top, all.length)} slowest files:`);
  for (const t of all.slice(0, top)) out.push(`   ${t.seconds.toFixed(1).padStart(8)} s  ${t.file} (${t.lane})`);
  out.push(`   wall time: ${minutes(wall)} of the ${minutes(budget)} budget`);
  if (wall > budget) out.push(`== OVER BUDGET: make test took ${minutes(wall)}, more than its ${minutes(budget)} (issue 33; docs/stand.md "Tests apart" says what each lane runs)`);
  return out;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("a whole number above 0");
  return n;
}

async function main(argv: string[]): Promise<void> {
  const program = new Command("test-lanes").exitOverride();
  program
    .command("plan")
    .requiredOption("--lanes <n>", "how many stand lanes", positiveInt)
    .argument("<files...>")
    .action((files: string[], o: { lanes: number }) => {
      const beside = new Set(readListFile(path.join(repoRoot, "test", "stand-beside.txt")));
      for (const lane of planLanes(files, o.lanes, readKnownTimes(), beside)) console.log(lane.files.join(" "));
    });
  program
    .command("budget")
    .requiredOption("--wall <seconds>", "the run's wall time so far", positiveInt)
    .requiredOption("--budget <seconds>", "the wall time make test may take", positiveInt)
    .argument("<lanes...>", "name=times.jsonl, or name=times.jsonl=wall seconds")
    .action((specs: string[], o: { wall: number; budget: number }) => {
      const lanes = specs.map((spec) => {
        const [name = spec, file = "", wall] = spec.split("=");
        return { name, times: readTimes(file), wallSeconds: wall === undefined ? undefined : Number(wall) };
      });
      for (const line of budgetTable(lanes, o.wall, o.budget)) console.log(line);
    });
  program
    .command("record")
    .argument("<times...>", "times.jsonl files of a run")
    .action((files: string[]) => {
      const known = readKnownTimes();
      for (const t of files.flatMap(readTimes)) if (t.failed === 0) known[t.file] = Number(t.seconds.toFixed(1));
      const sorted = Object.fromEntries(Object.entries(known).sort((a, b) => a[0].localeCompare(b[0])));
      writeFileSync(TIMES_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
      console.log(`wrote ${Object.keys(sorted).length} files' times to ${path.relative(repoRoot, TIMES_FILE)}`);
    });
  program
    .command("derive")
    .requiredOption("--out <file>", "where the second test stand's config goes")
    .option("--from <file>", "the test stand's config", "test/stand.test.yaml")
    .action((o: { out: string; from: string }) => {
      const text = shiftedStandConfigText(path.resolve(repoRoot, o.from), SECOND_STAND_PORT_SHIFT, SECOND_STAND_STATE_DIR,
        `the second test stand, written by scripts/test-lanes.ts derive from ${o.from}: every port + ${SECOND_STAND_PORT_SHIFT}, state in ${SECOND_STAND_STATE_DIR}`);
      writeFileSync(path.resolve(repoRoot, o.out), text);
    });
  await program.parseAsync(argv);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.join(repoRoot, "scripts", "test-lanes.ts")) {
  await main(process.argv);
}
