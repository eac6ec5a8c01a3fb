// The user's world, read without changing it: world_position, rows of every table of the world's
// databases on every node, Kafka end offsets and committed group offsets, and the latest world DAG
// run. scripts/test-stand.sh saves one before `make test` / `make bench` and compares after, so "tests never touch
// the user's world" is checked on every run, not promised (docs/stand.md, "Tests apart").
//
//   node --import tsx src/world-ops/guard.ts save  --config stand.yaml --out FILE
//   node --import tsx src/world-ops/guard.ts check --config stand.yaml --before FILE
//   node --import tsx src/world-ops/guard.ts apart --config stand.yaml --test-config test/stand.test.yaml
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command } from "commander";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { z } from "zod";
import { connectClickHouse, quoteIdentifier, quoteString } from "../clickhouse/index.ts";
import { collectPorts, kafkaBroker, parseStandConfig, postgresUrl, stateDir, type StandConfig } from "../config/index.ts";
import { APPLICATION_DATABASES, WORLD_DAG_IDS, WORLD_POSITION_KEY } from "../world/index.ts";
import { isPortOpen } from "../services/index.ts";
import { errorMessage } from "../errors.ts";

export interface WorldSnapshot {
  position: string | null;
  /** The newest world DAG run (dag/run/state), and how many are queued or running. */
  latestWorldRun: string | null;
  activeWorldRuns: number;
  /** "node db.table" → rows (views, Kafka readers and Distributed tables are not read; tables whose
   * merges fold rows are counted with FINAL). */
  tables: Record<string, number>;
  /** "topic/partition" → end offset. */
  topicEnds: Record<string, string>;
  /** "group topic/partition" → committed offset. */
  groupOffsets: Record<string, string>;
}

const counts = z.record(z.string(), z.number().int().min(0));
const offsets = z.record(z.string(), z.string().regex(/^-?\d+$/));
const worldSnapshotSchema = z.object({
  position: z.string().nullable(),
  latestWorldRun: z.string().nullable(),
  activeWorldRuns: z.number().int().min(0),
  tables: counts,
  topicEnds: offsets,
  groupOffsets: offsets,
});

/** What `save` writes when the user's stand was not running: the one case `check` passes without comparing. */
const notRunningSchema = z.object({ standRunning: z.literal(false), config: z.string(), at: z.string() }).strict();

export type SavedWorld = { kind: "snapshot"; snapshot: WorldSnapshot } | { kind: "not-running"; config: string; at: string };

/**
 * Reads what `save` wrote. A missing, unreadable or malformed file is an error naming the file and
 * the problem: the guard cannot then say the world is untouched, so it must not pass.
 */
export function readSavedWorld(file: string): SavedWorld {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`world guard: the before-snapshot ${file} cannot be read (${errorMessage(err)}); without it the guard cannot say your world is untouched`, { cause: err });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`world guard: the before-snapshot ${file} is not JSON (${errorMessage(err)}): it is corrupt`, { cause: err });
  }
  const notRunning = notRunningSchema.safeParse(raw);
  if (notRunning.success) return { kind: "not-running", config: notRunning.data.config, at: notRunning.data.at };
  const parsed = worldSnapshotSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(the file)"}: ${i.message}`).join("; ");
    throw new Error(`world guard: the before-snapshot ${file} is not a world snapshot: ${problems}`);
  }
  return { kind: "snapshot", snapshot: parsed.data };
}

export function readConfigFile(file: string): StandConfig {
  return parseStandConfig(readFileSync(file, "utf8"), file);
}

async function readRunner(config: StandConfig): Promise<Pick<WorldSnapshot, "position" | "latestWorldRun" | "activeWorldRuns">> {
  const client = new pg.Client({ connectionString: postgresUrl(config.postgres.runner_database, config), application_name: "world-guard" });
  await client.connect();
  try {
    const position = await client.query<{ value: string }>("select value from runner.variables where key = $1", [WORLD_POSITION_KEY]);
    const latest = await client.query<{ label: string }>(
      "select dag_id || '/' || run_id || '/' || state as label from runner.dag_runs where dag_id = any($1) order by id desc limit 1",
      [WORLD_DAG_IDS],
    );
    const active = await client.query<{ n: string }>(
      "select count(*) as n from runner.dag_runs where dag_id = any($1) and state in ('queued', 'running')",
      [WORLD_DAG_IDS],
    );
    return { position: position.rows[0]?.value ?? null, latestWorldRun: latest.rows[0]?.label ?? null, activeWorldRuns: Number(active.rows[0]?.n ?? 0) };
  } finally {
    await client.end();
  }
}

/** Engines that hold no rows of their own: views, Kafka readers, Distributed tables. */
export const SKIPPED_ENGINES = ["View", "MaterializedView", "Kafka", "Distributed"];
/** Engines whose background merges fold rows: their plain count() moves with nobody writing, so
 * they are counted with FINAL (the rows a query sees once merged), which merges do not change. */
export const FOLDING_ENGINE = /^(Replicated)?(Replacing|Collapsing|VersionedCollapsing|Summing|Aggregating)MergeTree$/;

/** The world's tables on one node that hold rows (views, Kafka readers and Distributed tables aside), in name order. */
export function listWorldTables(ch: { query<T>(sql: string): Promise<T[]> }): Promise<{ database: string; name: string; engine: string }[]> {
  return ch.query<{ database: string; name: string; engine: string }>(
    `SELECT database, name, engine FROM system.tables WHERE database IN (${APPLICATION_DATABASES.map(quoteString).join(", ")})
       AND engine NOT IN (${SKIPPED_ENGINES.map(quoteString).join(", ")}) ORDER BY database, name`,
  );
}

async function readTables(config: StandConfig): Promise<Record<string, number>> {
  const tables: Record<string, number> = {};
  for (const node of config.clickhouse.nodes) {
    const ch = connectClickHouse({ node: node.name, account: "reader", config, requestTimeoutMs: 30_000 });
    try {
      const list = await listWorldTables(ch);
      for (const t of list) {
        const final = FOLDING_ENGINE.test(t.engine) ? " FINAL" : "";
        const rows = await ch.query<{ n: string }>(`SELECT count() AS n FROM ${quoteIdentifier(t.database)}.${quoteIdentifier(t.name)}${final}`);
        tables[`${node.name} ${t.database}.${t.name}`] = Number(rows[0]?.n ?? 0);
      }
    } finally {
      await ch.close();
    }
  }
  return tables;
}

async function readKafka(config: StandConfig): Promise<Pick<WorldSnapshot, "topicEnds" | "groupOffsets">> {
  const kafka = new Kafka({ clientId: "world-guard", brokers: [kafkaBroker(config)], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => !t.startsWith("__")).sort();
    const topicEnds: Record<string, string> = {};
    for (const topic of topics) {
      for (const p of await admin.fetchTopicOffsets(topic)) topicEnds[`${topic}/${p.partition}`] = p.high;
    }
    const groupOffsets: Record<string, string> = {};
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).sort();
    for (const groupId of groups) {
      for (const t of await admin.fetchOffsets({ groupId, topics })) {
        for (const p of t.partitions) if (p.offset !== "-1") groupOffsets[`${groupId} ${t.topic}/${p.partition}`] = p.offset;
      }
    }
    return { topicEnds, groupOffsets };
  } finally {
    await admin.disconnect();
  }
}

export async function takeWorldSnapshot(config: StandConfig): Promise<WorldSnapshot> {
  const [runner, tables, kafka] = await Promise.all([readRunner(config), readTables(config), readKafka(config)]);
  return { ...runner, tables, ...kafka };
}

/** The differences between two snapshots, one line each; empty when the world is as it was. */
export function diffSnapshots(before: WorldSnapshot, after: WorldSnapshot): string[] {
  const lines: string[] = [];
  if (before.position !== after.position) lines.push(`${WORLD_POSITION_KEY}: ${before.position ?? "unset"} -> ${after.position ?? "unset"}`);
  for (const key of ["tables", "topicEnds", "groupOffsets"] as const) {
    const a: Record<string, string | number> = before[key];
    const b: Record<string, string | number> = after[key];
    for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (a[name] !== b[name]) lines.push(`${key} ${name}: ${a[name] ?? "absent"} -> ${b[name] ?? "absent"}`);
    }
  }
  return lines;
}

/** Ports and state directories the two stands share; a test stand must share none. */
export function sharedResources(user: StandConfig, test: StandConfig): string[] {
  const userPorts = new Set(collectPorts(user));
  const shared = collectPorts(test).filter((p) => userPorts.has(p)).map((p) => `port ${p}`);
  if (stateDir(user) === stateDir(test)) shared.push(`state directory ${stateDir(user)}`);
  return shared;
}

function summary(s: WorldSnapshot): string {
  const rows = Object.values(s.tables).reduce((a, b) => a + b, 0);
  return `position ${s.position ?? "unset"}, ${Object.keys(s.tables).length} tables / ${rows} rows, ` +
    `${Object.keys(s.topicEnds).length} topic partitions, ${Object.keys(s.groupOffsets).length} group offsets`;
}

async function main(argv: string[]): Promise<void> {
  const program = new Command("world-guard").description("read the user's world without changing it");
  program
    .command("apart")
    .requiredOption("--config <file>", "the user's stand config")
    .requiredOption("--test-config <file>", "the test stand's config")
    .action((o: { config: string; testConfig: string }) => {
      const shared = sharedResources(readConfigFile(o.config), readConfigFile(o.testConfig));
      if (shared.length > 0) {
        console.error(`world-guard: the test stand (${o.testConfig}) shares ${shared.join(", ")} with your stand (${o.config}); ` +
          "tests would run on your world. Give the test stand its own ports and state_dir.");
        process.exitCode = 2;
      }
    });
  program
    .command("save")
    .requiredOption("--config <file>", "the user's stand config")
    .requiredOption("--out <file>", "where the snapshot goes")
    .action(async (o: { config: string; out: string }) => {
      const config = readConfigFile(o.config);
      if (!(await isPortOpen(config.postgres.port, config.bind_host))) {
        const where = path.relative(process.cwd(), path.resolve(o.config));
        writeFileSync(o.out, JSON.stringify({ standRunning: false, config: where, at: new Date().toISOString() }, null, 2));
        console.log(`world guard: your stand (${where}) is not running; nothing to guard`);
        return;
      }
      const snapshot = await takeWorldSnapshot(config);
      writeFileSync(o.out, JSON.stringify(snapshot, null, 2));
      console.log(`world guard: your world before the tests: ${summary(snapshot)}`);
    });
  program
    .command("check")
    .requiredOption("--config <file>", "the user's stand config")
    .requiredOption("--before <file>", "the snapshot saved before the tests")
    .action(async (o: { config: string; before: string }) => {
      let saved: SavedWorld;
      try {
        saved = readSavedWorld(o.before);
      } catch (err) {
        console.error(`${errorMessage(err)}. FAILED: run the tests again (scripts/test-stand.sh saves a new one first)`);
        process.exitCode = 1;
        return;
      }
      if (saved.kind === "not-running") {
        console.log(`world guard: your stand was not running (${saved.config}, ${saved.at}), nothing to guard`);
        return;
      }
      const before = saved.snapshot;
      const after = await takeWorldSnapshot(readConfigFile(o.config));
      const diff = diffSnapshots(before, after);
      if (diff.length === 0) {
        console.log(`world guard: your world is exactly as it was (${summary(after)})`);
        return;
      }
      if (after.latestWorldRun !== before.latestWorldRun || before.activeWorldRuns > 0 || after.activeWorldRuns > 0) {
        console.log(`world guard: your world changed during the tests, and your own runner ran world DAGs meanwhile ` +
          `(latest ${before.latestWorldRun ?? "none"} -> ${after.latestWorldRun ?? "none"}); not attributed to the tests:\n  ${diff.join("\n  ")}`);
        return;
      }
      console.error(`world guard: FAILED: the tests changed your world (no world DAG ran on your runner):\n  ${diff.join("\n  ")}`);
      process.exitCode = 1;
    });
  await program.parseAsync(argv);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main(process.argv);
}
