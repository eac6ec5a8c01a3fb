// Loader throughput benchmark (issue 11, figure 2 of make bench): hits per second and CPU µs per hit
// of the loader draining a topic that already holds HITS generator hits (days 0, 1, … of the world,
// produced once into bench_lt_hits, 2 partitions), beside the Kafka-engine reader draining the same
// hits in the same run:
//   (a) into a Null landing with no views (bench_lt_null.hits_in, the world's stg.hits_in statement
//       moved there): the loader's own cost plus ClickHouse parsing the rows
//       baseline: a Kafka-engine reader per node and one view into the same landing
//   (b) through the world's chain (stg.hits_in and its views into stg.hits_raw, ods.event,
//       ods.event_errors, moved into bench_lt_stg / bench_lt_ods)
//       baseline: the old Kafka-engine chain (bench/sql/kafka-engine-baseline.sql in bench_lt_ke)
//   (a2) as (a) with a group of two loaders (two members, each its own Kafka client and
//       connections, in this process): what the group's coordination costs (issue 25: no more
//       than 10 % below the lone loader; on two cores no gain is expected)
//       baseline: the lone loader of (a)
//   and, as a reference (not a baseline), kafkajs alone with the loader's consumer settings doing
//   nothing with the messages: what the loader's Kafka client costs by itself
// Each drain is timed from the moment it may consume until its consumer group committed the topic's
// end (offsets polled every 100 ms) and, through a chain, until its ODS holds every row. The loader
// runs in this process (CPU from process.cpuUsage); ClickHouse CPU is both servers' from /proc.
// Touches no world name (no world lock); every bench_lt_* database, topic and group is dropped at
// the end. Run on the test stand:
//   STAND_CONFIG=test/stand.test.yaml node --import tsx bench/loader-bench.ts
import { randomBytes } from "node:crypto";
import { kafkaBroker, loadStandConfig, standConfigPath, type LoaderConfigInput } from "../src/config/index.ts";
import { deadLetterTableDdl } from "../src/loader/index.ts";
import { buildGenerator, runGenerator } from "../tasks/index.ts";
import { benchClickHouse, createBenchDatabases, dropBenchDatabases, prepareKafkaEngine, runStatements, worldHitsChain } from "./bench-clickhouse.ts";
import { drainWithKafkaEngine, drainWithKafkajsOnly, drainWithLoader, type DrainResult } from "./bench-drains.ts";

type DrainOptions = Pick<LoaderConfigInput, "captureMode" | "insertFormat" | "flush">;
import { dropGroups, dropTopic, freshTopic, quietIo } from "./bench-kafka.ts";
import { count, machineLine, printTable, ratio, seconds } from "./bench-report.ts";
import { errorMessage } from "../src/errors.ts";

const HITS = 240_000;
const TARGET_HITS_PER_SECOND = 100_000;
const TOPIC = "bench_lt_hits";
const NULL_DB = "bench_lt_null";
const CHAIN = { stg: "bench_lt_stg", ods: "bench_lt_ods" };
const KE_DB = "bench_lt_ke";
const DATABASES = [NULL_DB, CHAIN.stg, CHAIN.ods, KE_DB];
const LANDING_DATABASES = [NULL_DB, CHAIN.stg, CHAIN.ods];

const hex = randomBytes(4).toString("hex");
const GROUPS = {
  loaderNull: `bench_lt_loader_null_${hex}`,
  loaderNullPair: `bench_lt_loader_null_pair_${hex}`,
  keNull: `bench_lt_ke_null_${hex}`,
  loaderChain: `bench_lt_loader_chain_${hex}`,
  keChain: `bench_lt_ke_chain_${hex}`,
  kafkajsOnly: `bench_lt_kafkajs_${hex}`,
};

/** Plays generator days into the bench topic until HITS were sent; returns how many. */
/** Groups made during the run, besides GROUPS. */
const extraGroups: string[] = [];

async function produceHits(): Promise<number> {
  const generator = await buildGenerator({ ...quietIo, mode: "local" });
  console.log(`producing ${count(HITS)} generator hits into ${TOPIC} (generator ${generator.hash.slice(0, 12)}, local)`);
  const args = ["batch", "--day", "0", "--days", "60", "--limit", String(HITS), "--brokers", kafkaBroker(loadStandConfig()), "--topic", TOPIC];
  const run = await runGenerator({ ...quietIo, build: generator, args });
  const sent = /batch finished: ([\d,]+) hits/.exec(run.stderrTail.find((l) => l.includes("batch finished")) ?? "")?.[1];
  if (sent === undefined) throw new Error(`the generator did not report what it sent: ${run.stderrTail.slice(-3).join(" / ")}`);
  return Number(sent.replace(/,/g, ""));
}

async function createLandings(): Promise<void> {
  await createBenchDatabases(LANDING_DATABASES);
  await runStatements(await worldHitsChain({ stg: NULL_DB, ods: NULL_DB }, true));
  await runStatements(await worldHitsChain(CHAIN, false));
  await runStatements([NULL_DB, CHAIN.stg].map((db) => ({ label: `${db}.dead_letters`, sql: deadLetterTableDdl(`${db}.dead_letters`) })));
}

/** Rows that reached the chain's ODS tables and dead letters, to show the drain landed everything. */
async function landed(db: { ods: string; deadLetters: string }): Promise<{ ods: number; deadLetters: number }> {
  const ch = benchClickHouse();
  try {
    const ods = db.ods === "" ? "0" : `(SELECT count() FROM ${db.ods}.event_dist) + (SELECT count() FROM ${db.ods}.event_errors_dist)`;
    const dead = db.deadLetters === "" ? "0" : `(SELECT count() FROM ${db.deadLetters})`;
    const [row] = await ch.query<{ ods: string; dead: string }>(`SELECT ${ods} AS ods, ${dead} AS dead`);
    return { ods: Number(row?.ods ?? 0), deadLetters: Number(row?.dead ?? 0) };
  } finally {
    await ch.close();
  }
}

interface Measured {
  what: string;
  result: DrainResult;
  note: string;
  /** The baseline this row is compared with; none for a baseline or a reference row. */
  versus?: Measured;
  /** How the row reads in the "vs baseline" column when it has no baseline. */
  role?: "baseline" | "reference";
}

function firstCommitSeconds(result: DrainResult): number {
  return (result.drain.samples.find((sample) => sample.committed > 0)?.atMs ?? Number.NaN) / 1000;
}

function report(rows: readonly Measured[]): void {
  const header = ["path", "hits", "first commit, s", "all committed, s", "ODS complete, s", "hits/s", "vs baseline", "process CPU µs/hit", "ClickHouse CPU µs/hit", "total CPU µs/hit", "landed"];
  const rate = (r: DrainResult): number => r.drain.total / (r.odsSeconds ?? r.drain.seconds);
  const body = rows.map((m) => {
    const { drain, odsSeconds, processCpuMicros, clickhouseCpuMicros } = m.result;
    return [
      m.what, count(drain.total), seconds(firstCommitSeconds(m.result)), seconds(drain.seconds), odsSeconds === undefined ? "-" : seconds(odsSeconds),
      count(rate(m.result)), m.versus ? ratio(rate(m.result), rate(m.versus.result)) : `(${m.role ?? "baseline"})`,
      (processCpuMicros / drain.total).toFixed(1), (clickhouseCpuMicros / drain.total).toFixed(1), ((processCpuMicros + clickhouseCpuMicros) / drain.total).toFixed(1), m.note,
    ];
  });
  printTable(`Figure 2 — loader throughput, ${count(rows[0]?.result.drain.total ?? 0)} generator hits already in Kafka, loader vs Kafka engine, same run (target ≥ ${count(TARGET_HITS_PER_SECOND)} hits/s)`, header, body);
  const rateOf = (prefix: string): number => {
    const row = rows.find((m) => m.what.startsWith(prefix));
    return row ? rate(row.result) : 0;
  };
  const [a, a2, b] = [rateOf("(a) loader"), rateOf("(a2)"), rateOf("(b) loader")];
  console.log(
    `Target ≥ ${count(TARGET_HITS_PER_SECOND)} hits/s: (a) ${a >= TARGET_HITS_PER_SECOND ? "met" : "MISSED"}, (b) ${b >= TARGET_HITS_PER_SECOND ? "met" : "MISSED"}. ` +
      `A group of 2 loaders ≥ 0.9x the lone one (issue 25): ${ratio(a2, a)}, ${a2 >= 0.9 * a ? "met" : "MISSED"}. ` +
      "Seconds count from the moment a path may consume (the loader joining its group; the Kafka engine's readers created ON CLUSTER): " +
      "hits/s = hits ÷ all committed, or ÷ ODS complete through a chain (the Kafka engine's event_dist fills asynchronously after its commits; the loader's inserts are synchronous). " +
      "The Kafka engine commits once per block (up to 65,536 rows), the loader once per flush cycle. " +
      `Process CPU is this process: the in-process loader, or only the offset and ODS pollers for the Kafka engine; ClickHouse CPU is both servers' (/proc), so it includes anything else they ran meanwhile (other tests on the test stand); Kafka's own CPU is in neither. ${machineLine()}`,
  );
}

async function measure(sent: number): Promise<Measured[]> {
  console.log("(a) loader → Null landing");
  const a = await drainWithLoader({ topic: TOPIC, groupId: GROUPS.loaderNull, landing: `${NULL_DB}.hits_in`, deadLetters: `${NULL_DB}.dead_letters` });
  const aDead = (await landed({ ods: "", deadLetters: `${NULL_DB}.dead_letters` })).deadLetters;
  console.log("(a2) a group of 2 loaders → Null landing");
  const a2 = await drainWithLoader({ topic: TOPIC, groupId: GROUPS.loaderNullPair, landing: `${NULL_DB}.hits_in`, deadLetters: `${NULL_DB}.dead_letters`, members: 2 });
  const a2Dead = (await landed({ ods: "", deadLetters: `${NULL_DB}.dead_letters` })).deadLetters - aDead;
  console.log("(a) baseline: Kafka engine → Null landing");
  const nullChain = { target: { db: NULL_DB, topic: TOPIC, group: GROUPS.keNull }, chainFile: "kafka-engine-null-landing.sql", extraValues: { landing: `${NULL_DB}.hits_in` } };
  await prepareKafkaEngine(nullChain);
  const aBase: Measured = { what: "(a) baseline: Kafka engine → Null landing", result: await drainWithKafkaEngine(nullChain), note: "-" };
  await dropBenchDatabases([NULL_DB]); // its readers leave the group and stop competing with (b)
  console.log("(b) loader → the world's chain");
  const b = await drainWithLoader({ topic: TOPIC, groupId: GROUPS.loaderChain, landing: `${CHAIN.stg}.hits_in`, deadLetters: `${CHAIN.stg}.dead_letters`, ods: CHAIN.ods });
  const bLanded = await landed({ ods: CHAIN.ods, deadLetters: `${CHAIN.stg}.dead_letters` });
  const chainWith = async (label: string, options: DrainOptions) => {
    console.log(label);
    await dropBenchDatabases([CHAIN.stg, CHAIN.ods]);
    await createBenchDatabases([CHAIN.stg, CHAIN.ods]);
    await runStatements(await worldHitsChain(CHAIN, false));
    await runStatements([{ label: `${CHAIN.stg}.dead_letters`, sql: deadLetterTableDdl(`${CHAIN.stg}.dead_letters`) }]);
    const groupId = `bench_lt_loader_chain_${options.captureMode ?? "raw_only"}_${options.insertFormat ?? "row_binary"}_${options.flush?.maxRows ?? "default"}_${hex}`;
    extraGroups.push(groupId); // deleted at the end with the others
    const result = await drainWithLoader({ topic: TOPIC, groupId, landing: `${CHAIN.stg}.hits_in`, deadLetters: `${CHAIN.stg}.dead_letters`, ods: CHAIN.ods, options });
    const chainLanded = await landed({ ods: CHAIN.ods, deadLetters: `${CHAIN.stg}.dead_letters` });
    return { result, note: `ODS ${count(chainLanded.ods)} of ${count(sent)}, ${count(chainLanded.deadLetters)} dead letters` };
  };
  const bExtracted = await chainWith("(b) loader → the world's chain, extracted_only", { captureMode: "extracted_only" });
  const bJson = await chainWith("(b) loader → the world's chain, JSONEachRow (the fallback format)", { insertFormat: "json_each_row" });
  console.log("(b) baseline: the old Kafka-engine chain");
  const oldChain = { target: { db: KE_DB, topic: TOPIC, group: GROUPS.keChain }, chainFile: "kafka-engine-baseline.sql" };
  await prepareKafkaEngine(oldChain);
  const bBaseResult = await drainWithKafkaEngine(oldChain, KE_DB);
  const bBase: Measured = { what: "(b) baseline: Kafka engine → old chain", result: bBaseResult, note: `ODS ${count((await landed({ ods: KE_DB, deadLetters: "" })).ods)} of ${count(sent)}` };
  console.log("reference: kafkajs alone");
  const kafkajs = await drainWithKafkajsOnly(TOPIC, GROUPS.kafkajsOnly);
  return [
    { what: "(a) loader → Null landing", result: a, note: `${count(aDead)} dead letters`, versus: aBase },
    aBase,
    { what: "(a2) 2 loaders in one group → Null landing, vs (a)'s lone loader", result: a2, note: `${count(a2Dead)} dead letters`, versus: { what: "(a)", result: a, note: "" } },
    { what: "(b) loader → world chain (stg + ODS), RowBinary, raw_only (_raw kept)", result: b, note: `ODS ${count(bLanded.ods)} of ${count(sent)}, ${count(bLanded.deadLetters)} dead letters`, versus: bBase },
    { what: "(b) the same, extracted_only (stores what the baseline stores)", ...bExtracted, versus: bBase },
    { what: "(b) the same, JSONEachRow, raw_only", ...bJson, versus: bBase },
    bBase,
    { what: "reference: kafkajs alone, loader's consumer settings, no work", result: kafkajs, note: "-", role: "reference" },
  ];
}

async function main(): Promise<void> {
  if (!/stand\.test\.yaml$/.test(standConfigPath())) throw new Error(`the loader bench runs on the test stand only (STAND_CONFIG=test/stand.test.yaml), not ${standConfigPath()}`);
  try {
    await dropBenchDatabases(DATABASES);
    await freshTopic(TOPIC, 2);
    await createLandings();
    const sent = await produceHits();
    report(await measure(sent));
  } finally {
    await dropBenchDatabases(DATABASES).catch((err: unknown) => console.error(`cleanup: dropping ${DATABASES.join(", ")} failed: ${errorMessage(err)}`));
    await dropGroups([...Object.values(GROUPS), ...extraGroups]).catch((err: unknown) => console.error(`cleanup: deleting groups ${Object.values(GROUPS).join(", ")} failed: ${errorMessage(err)}`));
    await dropTopic(TOPIC).catch((err: unknown) => console.error(`cleanup: deleting topic ${TOPIC} failed: ${errorMessage(err)}`));
  }
}

await main();
