// Ingest benchmark (not a test): for each of the passport's starting days, how fast the generator
// puts the day into Kafka, and how long after its last message is acknowledged ODS holds every
// row of it (the passport condition, rows of ods.event_dist for the dates so far + rows of
// ods.event_errors_dist). Then the same for all days in one batch run, as world_initialize plays
// them. Run: node --import tsx bench/ingest-bench.ts
// It owns the world (drops and recreates stg ods dds dm dic, topics hits/orders) under the shared
// world lock, and drops the world again at the end.
import { kafkaBroker, loadStandConfig } from "../src/config/stand.ts";
import type { TaskIo } from "../src/world/io.ts";
import { loadPassport, type Passport } from "../src/world/passport.ts";
import { deleteConsumerGroups } from "../tasks/consumer-groups.ts";
import { dropApplicationDatabases } from "../tasks/databases.ts";
import { applyDdlFile, listDdlFiles } from "../tasks/ddl.ts";
import { buildGenerator, type GeneratorBuild } from "../tasks/generator-build.ts";
import { runGenerator } from "../tasks/generator-run.ts";
import { waitForHitsReaders } from "../tasks/hits-readers.ts";
import { createTopics, deleteTopics } from "../tasks/topics.ts";
import { waitForOds } from "../tasks/wait-for-ods.ts";
import { takeWorldLock } from "../test/support/world-lock.ts";

interface Row {
  what: string;
  events: number;
  /** Seconds the generator reported for producing (acks included), without process start. */
  produceSeconds: number;
  /** Wall seconds of the generator process. */
  processSeconds: number;
  /** Seconds from the generator's exit (last message acknowledged) until ODS held every row. */
  odsLagSeconds: number;
}

const quiet: TaskIo = { signal: new AbortController().signal, log: () => undefined };
const config = loadStandConfig();

async function freshWorld(): Promise<void> {
  await dropApplicationDatabases(quiet);
  await deleteConsumerGroups(quiet);
  await deleteTopics(quiet);
  await createTopics(quiet);
  for (const file of await listDdlFiles()) await applyDdlFile({ ...quiet, file });
  await waitForHitsReaders(quiet);
}

/** The seconds in the generator's "batch finished: N hits in S s" line. */
function reportedSeconds(stderrTail: readonly string[]): number {
  const line = stderrTail.find((l) => l.includes("batch finished"));
  const match = /in ([\d.]+) s/.exec(line ?? "");
  return match?.[1] ? Number(match[1]) : Number.NaN;
}

async function play(generator: GeneratorBuild, passport: Passport, what: string, firstDay: number, days: number): Promise<Row> {
  const args = ["batch", "--day", String(firstDay), "--days", String(days), "--brokers", kafkaBroker(config)];
  const run = await runGenerator({ ...quiet, build: generator, args });
  const exited = performance.now();
  const upTo = Array.from({ length: firstDay + days }, (_, i) => i);
  await waitForOds({ ...quiet, passport, days: upTo, timeoutMs: 300_000, pollMs: 100 });
  const odsLagSeconds = (performance.now() - exited) / 1000;
  const events = passport.days.slice(firstDay, firstDay + days).reduce((s, d) => s + d.events, 0);
  return { what, events, produceSeconds: reportedSeconds(run.stderrTail), processSeconds: run.seconds, odsLagSeconds };
}

function printTable(rows: readonly Row[]): void {
  const header = ["run", "events", "produce s", "events/s into Kafka", "process s", "ODS complete after last produce, s"];
  const cells = rows.map((r) => [
    r.what, String(r.events), r.produceSeconds.toFixed(2), Math.round(r.events / r.produceSeconds).toLocaleString("en-US"),
    r.processSeconds.toFixed(2), r.odsLagSeconds.toFixed(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (values: readonly string[]) => `| ${values.map((v, i) => v.padStart(widths[i] ?? 0)).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const c of cells) console.log(line(c));
}

async function main(): Promise<void> {
  const lock = await takeWorldLock((l) => console.log(l));
  try {
    const passport = await loadPassport();
    const generator = await buildGenerator({ ...quiet, mode: "local" });
    const rows: Row[] = [];
    await freshWorld();
    for (const day of passport.days) {
      rows.push(await play(generator, passport, `day ${day.day} (${day.date})`, day.day, 1));
    }
    await freshWorld();
    rows.push(await play(generator, passport, `days 0…${passport.days.length - 1} in one batch`, 0, passport.days.length));
    console.log(`ClickHouse 18.16 ×2 (one hits reader each), Kafka ${config.kafka.version}, generator ${generator.hash.slice(0, 12)} (local mode)`);
    printTable(rows);
  } finally {
    await dropApplicationDatabases(quiet).catch(() => undefined);
    await deleteConsumerGroups(quiet).catch(() => undefined);
    await deleteTopics(quiet).catch(() => undefined);
    await lock.release();
  }
}

await main();
