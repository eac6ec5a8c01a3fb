// World page benchmark (not a test): /ui/world, its JSON twin and GET /api/v2/world/summary served
// by the test stand's own runner over the test stand's world with at least 30 played days. Under the
// world lock it steps the world with world_next_day (days=7 at most per run) until world_position
// reaches 30, then times the first request and 20 more after 2 warm-ups of each, 1.1 s apart so
// that none is answered from the sources' 1 s memo, beside the 300 ms target of the first render. Run on the test stand only:
//   STAND_CONFIG=test/stand.test.yaml node --import tsx bench/world-bench.ts
// (make bench runs it after the web bench, through scripts/test-stand.sh).
import { apiBaseUrl, standConfigPath } from "../src/config/index.ts";
import { describeRun, readPositionText, runDag, withClickHouse } from "../testkit/index.ts";
import { isTestStand, withWorldLockAndRunner } from "./bench-world.ts";

const PLAYED_DAYS = 30;
const STEP_DAYS = 7;
const SAMPLES = 20;
const WARM_UPS = 2;
const TARGET_MS = 300;
/** Longer than the server keeps a World source's answer (src/server/app.ts): every sample reads ClickHouse. */
const PAUSE_MS = 1100;

function percentile(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] ?? NaN;
}

async function timed(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url);
  const body = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${body.slice(0, 200)}`);
  if (body.includes("data-part-error")) throw new Error(`${url} shows a part it could not read: ${/data-part-error="[^"]*">[^<]*/.exec(body)?.[0] ?? "?"}`);
  return performance.now() - started;
}

/** Steps the test stand's world until it has played PLAYED_DAYS days (recreating it first when it is not there). */
async function ensurePlayedDays(): Promise<number> {
  const hasOds = await withClickHouse((ch) => ch.query<{ result: number }>("EXISTS TABLE ods.event_v")).then((r) => Number(r[0]?.result) === 1);
  if (!hasOds || !(Number(await readPositionText()) >= 8)) {
    console.log("the test stand's world is not there: world_recreate");
    const recreated = await runDag("world_recreate", {}, 1800);
    if (recreated.run.state !== "success") throw new Error(describeRun(recreated));
  }
  for (;;) {
    const position = Number(await readPositionText());
    if (position >= PLAYED_DAYS) return position;
    const days = Math.min(STEP_DAYS, PLAYED_DAYS - position);
    console.log(`world at ${position} played days: world_next_day days=${days}`);
    const step = await runDag("world_next_day", { days }, 1800);
    if (step.run.state !== "success") throw new Error(describeRun(step));
  }
}

export async function benchWorldPage(): Promise<void> {
  if (!isTestStand()) throw new Error(`the world bench runs on the test stand only (STAND_CONFIG=test/stand.test.yaml), not ${standConfigPath()}`);
  await withWorldLockAndRunner(async () => {
    const position = await ensurePlayedDays();
    const base = apiBaseUrl();
    const pages: [string, string, boolean][] = [
      ["World page (HTML)", "/ui/world", true],
      ["World JSON twin (refresh)", "/ui/data/world", false],
      ["GET /api/v2/world/summary", "/api/v2/world/summary", false],
    ];
    console.log(`\nworld bench: the test stand's world at ${position} played days, served by its runner at ${base}; ${SAMPLES} sequential requests after ${WARM_UPS} warm-ups\n`);
    const rows = [["page", "first ms", "p50 ms", "p95 ms", "max ms", "target"]];
    for (const [name, path, targeted] of pages) {
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      const first = await timed(`${base}${path}`);
      const samples: number[] = [];
      for (let i = 0; i < WARM_UPS + SAMPLES; i++) {
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        const ms = await timed(`${base}${path}`);
        if (i >= WARM_UPS) samples.push(ms);
      }
      samples.sort((a, b) => a - b);
      const p95 = percentile(samples, 95);
      const verdict = targeted ? `<= ${TARGET_MS} ms: ${first <= TARGET_MS && p95 <= TARGET_MS ? "met" : "MISSED"}` : "-";
      rows.push([name, first.toFixed(1), percentile(samples, 50).toFixed(1), p95.toFixed(1), (samples.at(-1) ?? NaN).toFixed(1), verdict]);
    }
    const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
    rows.forEach((row, i) => {
      console.log(row.map((cell, k) => cell.padEnd(widths[k] ?? 0)).join("  "));
      if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWorldPage();
