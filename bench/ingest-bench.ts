// Ingest latency benchmark (issue 11, figure 1 of make bench): how long after the generator's last
// message is acknowledged ODS holds every row, by the passport condition (rows of event_dist for the
// dates so far + rows of event_errors_dist FINAL, polled every POLL_MS), for each of the passport's
// starting days played one after another and for all of them in one batch run, as world_initialize
// plays them. Two paths, the same generator days into each, measured in the same run:
//   loader        the world on the TEST stand: topics, the world's DDL (tasks/ddl.ts), the loader
//                 service asked to consume (testkit/world/ingest.ts), generator → topic hits
//   Kafka engine  the baseline, only here: database bench_ke, topic bench_ke_hits (2 partitions), a
//                 consumer group of its own, a reader per node and the old view chain
//                 (bench/sql/kafka-engine-baseline.sql), generator → bench_ke_hits
// Run on the test stand only (it drops and rebuilds the test stand's world under the world lock and
// drops it again at the end, as the earlier version of this bench did):
//   STAND_CONFIG=test/stand.test.yaml node --import tsx bench/ingest-bench.ts
import { randomBytes } from "node:crypto";
import { connectClickHouse, type StandClickHouse } from "../src/clickhouse/index.ts";
import { kafkaBroker, loadStandConfig, standConfigPath } from "../src/config/index.ts";
import { loadPassport, passportDays, type Passport, HITS_TOPIC } from "../src/world/index.ts";
import { deleteConsumerGroups, dropApplicationDatabases, applyDdlFile, listDdlFiles, buildGenerator, type GeneratorBuild, runGenerator, createTopics, deleteTopics, readOdsCounts, type OdsCounts } from "../tasks/index.ts";
import { setTestIngest, takeWorldLock } from "../testkit/index.ts";
import { dropBenchDatabases, prepareKafkaEngine, readBenchOdsCounts, startKafkaEngine } from "./bench-clickhouse.ts";
import { dropGroups, dropTopic, freshTopic, quietIo, waitForMembers, withAdmin } from "./bench-kafka.ts";
import { count, machineLine, median, printTable, ratio, seconds } from "./bench-report.ts";
import { errorMessage } from "../src/errors.ts";

const POLL_MS = 50;
const WAIT_TIMEOUT_MS = 300_000;
const TARGET_SECONDS = 1;
/** Measured before the loader (README, make bench): the Kafka engine path took 4.2–5.1 s. */
const KAFKA_ENGINE_BEFORE = "4.2–5.1 s";

const KE_DB = "bench_ke";
const KE_TOPIC = "bench_ke_hits";

interface IngestPath {
  readonly name: string;
  readonly topic: string;
  /** A namespace with no rows, consuming. */
  fresh(): Promise<void>;
  counts(ch: StandClickHouse, dates: readonly string[]): Promise<OdsCounts>;
  teardown(): Promise<void>;
}

async function emptyWorldNames(): Promise<void> {
  await setTestIngest(quietIo, "stopped", "bench/ingest-bench.ts");
  await dropApplicationDatabases(quietIo);
  await deleteConsumerGroups(quietIo);
  await deleteTopics(quietIo);
}

const loaderPath: IngestPath = {
  name: "loader",
  topic: HITS_TOPIC.name,
  async fresh() {
    await emptyWorldNames();
    await createTopics(quietIo);
    for (const file of await listDdlFiles()) await applyDdlFile({ ...quietIo, file });
    await setTestIngest(quietIo, "consuming", "bench/ingest-bench.ts");
  },
  counts: readOdsCounts,
  teardown: emptyWorldNames,
};

function kafkaEnginePath(): IngestPath {
  let group: string | undefined;
  const dropNamespace = async (): Promise<void> => {
    await dropBenchDatabases([KE_DB]);
    if (group !== undefined) await dropGroups([group]);
    group = undefined;
  };
  return {
    name: "Kafka engine",
    topic: KE_TOPIC,
    async fresh() {
      await dropNamespace();
      await freshTopic(KE_TOPIC, 2);
      group = `bench_ke_${randomBytes(4).toString("hex")}`;
      const chain = { target: { db: KE_DB, topic: KE_TOPIC, group }, chainFile: "kafka-engine-baseline.sql" };
      await prepareKafkaEngine(chain);
      await startKafkaEngine(chain);
      // as world_initialize waited for its readers: a hit read while the second one joins is read twice
      const readers = loadStandConfig().clickhouse.nodes.length;
      const joined = group;
      await withAdmin((admin) => waitForMembers(admin, joined, readers));
    },
    counts: (ch, dates) => readBenchOdsCounts(ch, KE_DB, dates),
    async teardown() {
      await dropNamespace();
      await dropTopic(KE_TOPIC);
    },
  };
}

interface Played {
  produceSeconds: number;
  /** Wall seconds of the generator process (start included). */
  processSeconds: number;
  odsSeconds: number;
  polls: number;
  pollMs: number;
}

/** The seconds in the generator's "batch finished: N hits in S s" line. */
function reportedSeconds(stderrTail: readonly string[]): number {
  const match = /batch finished: .* in ([\d.]+) s/.exec(stderrTail.find((l) => l.includes("batch finished")) ?? "");
  return match?.[1] ? Number(match[1]) : Number.NaN;
}

/** Plays days into the path's topic, then polls its ODS until the passport condition holds for every day so far. */
async function play(path: IngestPath, generator: GeneratorBuild, passport: Passport, firstDay: number, days: number): Promise<Played> {
  const args = ["batch", "--day", String(firstDay), "--days", String(days), "--size", loadStandConfig().world.size, "--brokers", kafkaBroker(loadStandConfig()), "--topic", path.topic];
  const run = await runGenerator({ ...quietIo, build: generator, args });
  const exited = performance.now();
  const upTo = passportDays(passport, Array.from({ length: firstDay + days }, (_, i) => i));
  const dates = upTo.map((d) => d.date);
  const expected = upTo.reduce((sum, d) => sum + d.events, 0);
  const ch = connectClickHouse({ account: "admin" }); // etl may read only the world's databases; one account for both paths
  const pollTimes: number[] = [];
  let lastLog = exited;
  try {
    for (;;) {
      const asked = performance.now();
      const seen = await path.counts(ch, dates);
      pollTimes.push(performance.now() - asked);
      const total = seen.eventRows + seen.errorRows;
      if (total >= expected) {
        return { produceSeconds: reportedSeconds(run.stderrTail), processSeconds: run.seconds, odsSeconds: (performance.now() - exited) / 1000, polls: pollTimes.length, pollMs: median(pollTimes) };
      }
      const waited = performance.now() - exited;
      if (waited > WAIT_TIMEOUT_MS) {
        throw new Error(`${path.name}: ODS did not reach ${expected} rows for ${dates.join(", ")} within ${WAIT_TIMEOUT_MS / 1000} s: ${seen.eventRows} event rows + ${seen.errorRows} error rows`);
      }
      if (performance.now() - lastLog >= 5000) {
        lastLog = performance.now();
        console.log(`  ${path.name}: waiting for ODS: ${total} of ${expected} rows (${seen.eventRows} events + ${seen.errorRows} errors) after ${(waited / 1000).toFixed(0)} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    await ch.close();
  }
}

interface Row {
  what: string;
  events: number;
  loader: Played;
  kafkaEngine: Played;
}

function report(rows: readonly Row[], generator: GeneratorBuild): void {
  const header = [
    "run", "hits", "produce s (loader / KE)", "loader: ODS complete after last produce, s", "Kafka engine (baseline), s", "loader / Kafka engine", `target ≤ ${TARGET_SECONDS} s`,
    "generator start → ODS complete, s (loader / KE)",
  ];
  const body = rows.map((r) => [
    r.what,
    count(r.events),
    `${seconds(r.loader.produceSeconds)} / ${seconds(r.kafkaEngine.produceSeconds)}`,
    seconds(r.loader.odsSeconds),
    seconds(r.kafkaEngine.odsSeconds),
    ratio(r.loader.odsSeconds, r.kafkaEngine.odsSeconds),
    r.loader.odsSeconds <= TARGET_SECONDS ? "met" : "MISSED",
    `${seconds(r.loader.processSeconds + r.loader.odsSeconds)} / ${seconds(r.kafkaEngine.processSeconds + r.kafkaEngine.odsSeconds)}`,
  ]);
  printTable("Figure 1 — last produce → ODS holds every row (passport condition), loader vs Kafka engine, same run", header, body);
  const polls = rows.flatMap((r) => [r.loader.pollMs, r.kafkaEngine.pollMs]);
  console.log(
    `ODS polled every ${POLL_MS} ms after the previous answer (median answer ${median(polls).toFixed(0)} ms), so a figure is late by at most ~${POLL_MS + Math.round(median(polls))} ms. ` +
      `Generator ${generator.hash.slice(0, 12)} (local), one process per run; "last produce" = its exit after the last ack. ` +
      `Kafka engine before the loader (recorded, README): ${KAFKA_ENGINE_BEFORE}. ${machineLine()}`,
  );
}

async function main(): Promise<void> {
  if (!/stand\.test\.yaml$/.test(standConfigPath())) throw new Error(`the ingest bench rebuilds the world: test stand only (STAND_CONFIG=test/stand.test.yaml), not ${standConfigPath()}`);
  const lock = await takeWorldLock();
  const kafkaEngine = kafkaEnginePath();
  try {
    const passport = await loadPassport();
    const generator = await buildGenerator({ ...quietIo, mode: "local" });
    const rows: Row[] = [];
    console.log("ingest bench: fresh world (loader) and bench_ke (Kafka engine)");
    await loaderPath.fresh();
    await kafkaEngine.fresh();
    for (const day of passport.days) {
      const loader = await play(loaderPath, generator, passport, day.day, 1);
      const ke = await play(kafkaEngine, generator, passport, day.day, 1);
      console.log(`  day ${day.day}: loader ${seconds(loader.odsSeconds)} s, Kafka engine ${seconds(ke.odsSeconds)} s`);
      rows.push({ what: `day ${day.day} (${day.date})`, events: day.events, loader, kafkaEngine: ke });
    }
    console.log(`ingest bench: fresh again, days 0…${passport.days.length - 1} in one batch run each`);
    await loaderPath.fresh();
    await kafkaEngine.fresh();
    const all = passport.days.length;
    const loader = await play(loaderPath, generator, passport, 0, all);
    const ke = await play(kafkaEngine, generator, passport, 0, all);
    rows.push({ what: `days 0…${all - 1} in one batch`, events: passport.totals.events, loader, kafkaEngine: ke });
    report(rows, generator);
  } finally {
    await loaderPath.teardown().catch((err: unknown) => console.error(`cleanup of the test stand's world failed: ${errorMessage(err)}`));
    await kafkaEngine.teardown().catch((err: unknown) => console.error(`cleanup of ${KE_DB}/${KE_TOPIC} failed: ${errorMessage(err)}`));
    await lock.release();
  }
}

await main();
