// ClickHouse plumbing of the ingest benchmarks, in bench databases only (bench_*, never stg ods dds
// dm dic): bench/sql/ files rendered through the platform layer and applied as admin from node 1;
// the world's own hits chain moved into bench databases; ODS counts by the passport condition;
// the CPU time the ClickHouse servers spent.
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { connectClickHouse, type StandClickHouse, detectPlatform, type Platform, quoteIdentifier, quoteString, splitSqlStatements, renderTemplate, type TemplateValues } from "../src/clickhouse/index.ts";
import { kafkaBroker, loadStandConfig, repoRoot, type StandConfig } from "../src/config/index.ts";
import { standContext } from "../src/stand/index.ts";
import { isProcessOurs } from "../src/services/index.ts";
import { readCatalogCsv, worldTemplateValues } from "../src/world/index.ts";
import { kafkaEngineClause, kafkaPositionExpressions } from "./kafka-engine.ts";
import { listDdlFiles, type OdsCounts } from "../tasks/index.ts";
import { errorMessage } from "../src/errors.ts";

const BENCH_SQL_DIR = path.join(repoRoot, "bench", "sql");
const BENCH_NAME = /^bench_[a-z0-9_]+$/;
/** ON CLUSTER statements wait for both nodes (the server's distributed DDL timeout is 180 s). */
const DDL_TIMEOUT_MS = 300_000;

export function benchName(name: string): string {
  if (!BENCH_NAME.test(name)) throw new Error(`'${name}' is not a bench name (bench_[a-z0-9_]+): the benchmarks never touch other databases`);
  return name;
}

export function benchClickHouse(node?: string): StandClickHouse {
  return connectClickHouse({ account: "admin", node, requestTimeoutMs: DDL_TIMEOUT_MS });
}

export async function benchPlatform(): Promise<Platform> {
  const ch = benchClickHouse();
  try {
    return await detectPlatform(ch);
  } finally {
    await ch.close();
  }
}

export interface KafkaEngineTarget {
  /** The bench database the file creates its tables in. */
  db: string;
  topic: string;
  group: string;
}

/** The values of a bench/sql/ Kafka-engine file: the world's cluster and platform fragments, and the reader's namespace. */
export function kafkaEngineValues(platform: Platform, target: KafkaEngineTarget, config: StandConfig = loadStandConfig()): TemplateValues {
  const db = benchName(target.db);
  return {
    cluster: quoteIdentifier(config.clickhouse.cluster),
    db,
    hits_topic: quoteString(target.topic),
    reader_engine: kafkaEngineClause(platform, { brokers: kafkaBroker(config), topic: target.topic, group: target.group, format: "JSONEachRow" }),
    "platform.low_cardinality_string": platform.lowCardinality("String"),
    "platform.instant_type": platform.instantType,
    "platform.instant_now": platform.instantNow,
    "platform.kafka_partition": kafkaPositionExpressions(platform).partition,
    "platform.kafka_offset": kafkaPositionExpressions(platform).offset,
    "platform.hits_landing_source": platform.viewChainSource(`${db}.hits_raw_mv`, `${db}.hits_raw`),
  };
}

export interface KafkaEngineChain {
  target: KafkaEngineTarget;
  /** The bench/sql/ file of the views (and their tables) over the reader `<db>.hits_raw_kafka`. */
  chainFile: string;
  /** Values that file needs beyond kafkaEngineValues (e.g. `landing`). */
  extraValues?: TemplateValues;
}

/**
 * Makes a Kafka-engine chain that does not read yet: the reader's name holds a Null table while the
 * chain's views are made over it, and is then dropped (a Null table, never a Kafka one: see
 * kafka-engine-baseline.sql on 18.16 aborting). The views keep their dependency on the name.
 */
export async function prepareKafkaEngine(chain: KafkaEngineChain): Promise<void> {
  const values = { ...kafkaEngineValues(await benchPlatform(), chain.target), ...chain.extraValues };
  const cluster = quoteIdentifier(loadStandConfig().clickhouse.cluster);
  await createBenchDatabases([chain.target.db]); // the stand-in reader comes before the chain file
  await applyBenchSql("kafka-engine-reader.sql", { ...values, reader_engine: "ENGINE = Null" });
  await applyBenchSql(chain.chainFile, values);
  await runStatements([{ label: `drop the Null stand-in ${chain.target.db}.hits_raw_kafka`, sql: `DROP TABLE ${benchName(chain.target.db)}.hits_raw_kafka ON CLUSTER ${cluster}` }]);
}

/** Creates the Kafka reader on every node under the name the prepared views read: it starts reading from its group's offsets (the start, for a new group). */
export async function startKafkaEngine(chain: KafkaEngineChain): Promise<void> {
  await applyBenchSql("kafka-engine-reader.sql", kafkaEngineValues(await benchPlatform(), chain.target));
}

/** Renders every statement of bench/sql/<file> first (a template mistake runs nothing), then runs them in order. */
export async function applyBenchSql(file: string, values: TemplateValues): Promise<number> {
  const text = await readFile(path.join(BENCH_SQL_DIR, file), "utf8");
  const statements = splitSqlStatements(text).map((s) => ({ ...s, sql: renderTemplate(s.text, values, file, s.line) }));
  await runStatements(statements.map((s) => ({ label: `${file}: statement ${s.number} (line ${s.line}) ${s.firstLine}`, sql: s.sql })));
  return statements.length;
}

export async function runStatements(statements: readonly { label: string; sql: string }[]): Promise<void> {
  const ch = benchClickHouse();
  try {
    for (const statement of statements) {
      try {
        await ch.command(statement.sql);
      } catch (err) {
        throw new Error(`${statement.label} failed: ${errorMessage(err)}`, { cause: err });
      }
    }
  } finally {
    await ch.close();
  }
}

export async function createBenchDatabases(names: readonly string[]): Promise<void> {
  const cluster = quoteIdentifier(loadStandConfig().clickhouse.cluster);
  await runStatements(names.map((n) => ({ label: `create database ${n}`, sql: `CREATE DATABASE IF NOT EXISTS ${benchName(n)} ON CLUSTER ${cluster}` })));
}

/** Drops bench databases on every node (a Kafka-engine reader in one leaves its group as it goes). */
export async function dropBenchDatabases(names: readonly string[]): Promise<void> {
  const cluster = quoteIdentifier(loadStandConfig().clickhouse.cluster);
  const sync = (await benchPlatform()).dropSyncClause;
  await runStatements(names.map((n) => ({ label: `drop database ${n}`, sql: `DROP DATABASE IF EXISTS ${benchName(n)} ON CLUSTER ${cluster}${sync}` })));
}

// ---- the world's hits chain, moved into bench databases -----------------------------------------

/** What the world's hits chain is made of, by database: the landing, its views and the tables they fill. */
const WORLD_HITS_CHAIN: Readonly<Record<"stg" | "ods", readonly string[]>> = {
  stg: ["hits_raw", "hits_raw_dist", "hits_in", "hits_raw_mv"],
  ods: ["event", "event_dist", "event_errors", "event_errors_dist", "event_mv", "event_errors_mv"],
};

export interface ChainDatabases {
  stg: string;
  ods: string;
}

const CREATED = /^CREATE\s+(?:TABLE|MATERIALIZED\s+VIEW)\s+IF\s+NOT\s+EXISTS\s+(stg|ods)\.(\w+)/i;

/** Moves one rendered world statement from stg/ods into the bench databases: names, ZooKeeper paths, Distributed targets. */
function retarget(sql: string, into: ChainDatabases, label: string): string {
  const db = (name: string): string => (name === "stg" ? into.stg : into.ods);
  const moved = sql
    .replace(/\b(stg|ods)\.(?=[A-Za-z_`])/g, (_m, d: string) => `${db(d)}.`)
    .replace(/(\/clickhouse\/tables\/\{shard\}\/)(stg|ods)\//g, (_m, prefix: string, d: string) => `${prefix}${db(d)}/`)
    .replace(/(Distributed\([^,]+,\s*)(stg|ods)(\s*,)/g, (_m, before: string, d: string, after: string) => `${before}${db(d)}${after}`);
  const code = moved.replace(/--[^\n]*/g, "").replace(/'(?:\\.|[^'\\])*'/g, "''");
  const left = /\b(stg|ods|dds|dm|dic)\b/.exec(code);
  if (left) throw new Error(`${label}: still names the world's database '${left[1] ?? ""}' after the move into ${into.stg}/${into.ods}; teach bench/bench-clickhouse.ts retarget() the new form`);
  return moved;
}

/**
 * The world's hits chain as the world renders it (sql/ddl/, world template values, this server's
 * platform), moved into `into`: so the loader bench lands through the chain the world runs, not a
 * copy. `landingOnly` keeps stg.hits_in alone (a Null landing with no views). In the world's order.
 */
export async function worldHitsChain(into: ChainDatabases, landingOnly: boolean): Promise<{ label: string; sql: string }[]> {
  benchName(into.stg);
  benchName(into.ods);
  const config = loadStandConfig();
  const values = worldTemplateValues({ platform: await benchPlatform(), config, catalogCsv: await readCatalogCsv() });
  const wanted = new Set(landingOnly ? ["stg.hits_in"] : Object.entries(WORLD_HITS_CHAIN).flatMap(([d, names]) => names.map((n) => `${d}.${n}`)));
  const found: { label: string; sql: string }[] = [];
  for (const file of await listDdlFiles()) {
    const text = readFileSync(path.join(repoRoot, "sql", "ddl", file), "utf8");
    for (const statement of splitSqlStatements(text)) {
      const created = CREATED.exec(statement.text);
      const name = created ? `${created[1]?.toLowerCase() ?? ""}.${created[2] ?? ""}` : "";
      if (!wanted.has(name)) continue;
      wanted.delete(name);
      const label = `sql/ddl/${file}: statement ${statement.number} (line ${statement.line}) ${statement.firstLine}`;
      found.push({ label, sql: retarget(renderTemplate(statement.text, values, file, statement.line), into, label) });
    }
  }
  if (wanted.size > 0) throw new Error(`the world's DDL (sql/ddl/) no longer creates ${[...wanted].join(", ")}: bench/bench-clickhouse.ts WORLD_HITS_CHAIN must follow it`);
  return found;
}

// ---- observations -------------------------------------------------------------------------------

/** The passport condition on a bench namespace's ODS tables (as tasks/wait-for-ods.ts readOdsCounts reads the world's). */
export async function readBenchOdsCounts(ch: StandClickHouse, db: string, dates: readonly string[]): Promise<OdsCounts> {
  const rows = await ch.query<{ events: string; errors: string }>(
    `SELECT (SELECT count() FROM ${benchName(db)}.event_dist WHERE EventDate IN (${dates.map(quoteString).join(", ")})) AS events,
            (SELECT count() FROM ${db}.event_errors_dist FINAL) AS errors`,
  );
  return { eventRows: Number(rows[0]?.events ?? 0), errorRows: Number(rows[0]?.errors ?? 0) };
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system, µs) a process has used so far, from /proc/<pid>/stat. */
export function processCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // after the command name: state is field 3, utime 14 and stime 15 (1-based)
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS_PER_SECOND;
}

/** The pids of the stand's ClickHouse servers (from the stand's own pid files). */
export function clickhousePids(config: StandConfig = loadStandConfig()): number[] {
  const ctx = standContext(() => undefined);
  return config.clickhouse.nodes.map((node) => {
    // readPid, not runningPid: a bench only reads the stand's pid files, it never tidies them
    const record = ctx.supervisor.readPid(`clickhouse-${node.name}`);
    if (!record || !isProcessOurs(record)) throw new Error(`ClickHouse node ${node.name} of the stand is not running (no live pid file under ${ctx.paths.pids})`);
    return record.pid;
  });
}

export function clickhouseCpuMicros(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + processCpuMicros(pid), 0);
}
