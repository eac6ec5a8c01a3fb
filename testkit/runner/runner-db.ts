// A private runner on a private database: useTestRunner gives a suite a silent runner on a fresh
// runner_test_<random> database (dropped with a leak check), cloned from a template that holds every
// migration the stand's runner applies (graphile-worker's, the runner's, the world's and the
// loader's sets), as graphile-worker's own tests clone a template per test file: a clone is a file
// copy, where migrating afresh ran ~60 migrations per suite; plus run waits, gates and polling.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Logger, runMigrations } from "graphile-worker";
import { migrate } from "../../src/migrator.ts";
import { RUNNER_MIGRATIONS, type Dag, type Runner, type RunnerOptions, createRunner, type DagRunRecord } from "../../src/runner/index.ts";
import assert from "node:assert/strict";
import { after, before } from "node:test";
import pg from "pg";
import { pino } from "pino";
import { loadStandConfig, postgresUrl } from "../../src/config/index.ts";
import { SERVER_MIGRATION_SETS } from "../../src/server/index.ts";

export const silentLogger = pino({ level: "silent" });
const graphileSilentLogger = new Logger(() => () => undefined);

export interface TestDatabase {
  name: string;
  url: string;
  /**
   * Drops the database; fails when a connection to it is still open (a leaked runner, worker, pool
   * or listener).
   */
  drop(): Promise<void>;
}

function adminUrl(): string {
  return postgresUrl(loadStandConfig().postgres.database);
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `runner_test_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return { name, url: postgresUrl(name), drop: () => dropTestDatabase(name) };
}

const MIGRATION_SETS = [RUNNER_MIGRATIONS, ...SERVER_MIGRATION_SETS];

/** The template's name: a hash of graphile-worker's version and every migration file, so changed migrations make a new one. */
export function templateName(): string {
  const hash = createHash("sha256");
  const graphileVersion = (createRequire(import.meta.url)("graphile-worker/package.json") as { version: string }).version;
  hash.update(`graphile-worker ${graphileVersion}\n`);
  for (const set of MIGRATION_SETS) {
    for (const file of readdirSync(set.dir).filter((f) => f.endsWith(".sql")).sort()) hash.update(`${set.owner}/${file}\n`).update(readFileSync(path.join(set.dir, file)));
  }
  return `runner_template_${hash.digest("hex").slice(0, 12)}`;
}

/** The advisory lock under which a template is built, and clones of it made (two processes on one stand). */
const TEMPLATE_LOCK = [7300, 99] as const;

/**
 * The migrated template, built once per set of migrations on the stand in force (under an advisory
 * lock, so two test processes build it once); templates of other migrations are dropped then.
 */
async function ensureTemplate(admin: pg.Client): Promise<string> {
  const name = templateName();
  const exists = await admin.query("select 1 from pg_database where datname = $1", [name]);
  if (exists.rowCount === 1) return name;
  const building = `${name}_building`;
  await admin.query(`drop database if exists ${building}`);
  await admin.query(`create database ${building}`);
  const pool = new pg.Pool({ connectionString: postgresUrl(building), max: 2 });
  pool.on("error", () => undefined); // a dropped idle connection is seen by the query that needs it
  try {
    await runMigrations({ pgPool: pool, logger: graphileSilentLogger });
    for (const set of MIGRATION_SETS) await migrate(pool, set);
  } finally {
    await pool.end();
  }
  await admin.query(`alter database ${building} rename to ${name}`);
  const stale = await admin.query<{ datname: string }>("select datname from pg_database where datname like 'runner\\_template\\_%' and datname <> $1", [name]);
  for (const { datname } of stale.rows) {
    await admin.query(`drop database if exists ${datname}`).catch(() => undefined); // in use by another run: left for next time
  }
  return name;
}

/** A fresh database with every migration of the stand's runner applied: a clone of the template. */
export async function createMigratedTestDatabase(): Promise<TestDatabase> {
  const name = `runner_test_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query("select pg_advisory_lock($1, $2)", [...TEMPLATE_LOCK]);
    try {
      const template = await ensureTemplate(admin);
      await admin.query(`create database ${name} template ${template}`);
    } finally {
      await admin.query("select pg_advisory_unlock($1, $2)", [...TEMPLATE_LOCK]);
    }
  } finally {
    await admin.end();
  }
  return { name, url: postgresUrl(name), drop: () => dropTestDatabase(name) };
}

async function dropTestDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    let holders: { application_name: string; state: string }[] = [];
    // a closed client's backend may take a moment to go away; a leaked one never does
    for (let i = 0; i < 40; i++) {
      const res = await admin.query<{ application_name: string; state: string }>(
        "select application_name, state from pg_stat_activity where datname = $1",
        [name],
      );
      holders = res.rows;
      if (holders.length === 0) break;
      await sleep(50);
    }
    assert.deepEqual(holders, [], `connections leaked to ${name}: ${JSON.stringify(holders)}`);
    await admin.query(`drop database ${name}`);
  } finally {
    await admin.end();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type TestRunnerOptions = Partial<Omit<RunnerOptions, "pgUrl" | "dags">>;

export async function startRunner(db: TestDatabase, dags: readonly Dag[], options: TestRunnerOptions = {}): Promise<Runner> {
  const runner = createRunner({
    pgUrl: db.url,
    dags,
    concurrency: 4,
    leaseSeconds: 5,
    logger: silentLogger,
    shutdownGraceMs: 500,
    // the private database gets the stand's runner database's shape: the world's and the loader's tables too
    migrationSets: SERVER_MIGRATION_SETS,
    ...options,
  });
  await runner.start();
  return runner;
}

export interface UseTestRunnerOptions extends TestRunnerOptions {
  /** Runs in `after` before the runner stops: open the gates tasks still wait on, close what uses the runner. */
  beforeStop?: () => void | Promise<void>;
}

export interface TestRunnerHandle {
  /** The running runner; only inside hooks and tests (it starts in `before`). */
  readonly runner: Runner;
  /** The runner's database; only inside hooks and tests. */
  readonly db: TestDatabase;
}

/**
 * One runner on a fresh database for the enclosing suite (or file): registers a `before` that
 * creates the database and starts the runner, and an `after` that runs `beforeStop`, stops the
 * runner and drops the database (failing when a connection leaked). Hooks run in the order they
 * are registered, so a suite's own `before` placed after this call sees the runner started.
 */
export function useTestRunner(dags: readonly Dag[], options: UseTestRunnerOptions = {}): TestRunnerHandle {
  const { beforeStop, ...runnerOptions } = options;
  let db: TestDatabase | undefined;
  let runner: Runner | undefined;
  before(async () => {
    db = await createMigratedTestDatabase();
    runner = await startRunner(db, dags, runnerOptions);
  });
  after(async () => {
    // every step runs even when an earlier one failed; every failure is reported
    const failures: unknown[] = [];
    for (const step of [beforeStop, () => runner?.stop(), () => db?.drop()]) {
      try {
        await step?.();
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `useTestRunner teardown failed ${failures.length} times`);
  });
  return {
    get runner() {
      if (!runner) throw new Error("useTestRunner: the runner starts in before(); use it inside hooks and tests");
      return runner;
    },
    get db() {
      if (!db) throw new Error("useTestRunner: the database is created in before(); use it inside hooks and tests");
      return db;
    },
  };
}

/** Triggers a run and waits for it to end (NOTIFY-driven), failing after timeoutMs. */
export async function triggerAndWait(
  runner: Runner,
  dagId: string,
  conf: Record<string, unknown> = {},
  timeoutMs = 15_000,
): Promise<DagRunRecord> {
  const run = await runner.triggerRun(dagId, { conf: conf as never, triggeredBy: "test" });
  const done = await runner.waitForRun(dagId, run.runId, { timeoutMs });
  assert.ok(done.state === "success" || done.state === "failed", `run ${run.runId} still ${done.state} after ${timeoutMs} ms`);
  return done;
}

export async function taskStates(runner: Runner, dagId: string, runId: string): Promise<Record<string, string>> {
  const tis = await runner.listTaskInstances(dagId, runId);
  return Object.fromEntries(tis.map((ti) => [ti.taskId, ti.state]));
}

/** A direct connection for assertions on the runner's tables. */
export async function withClient<T>(db: TestDatabase, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A latch tasks can wait on, opened by the test. */
export class Gate {
  private release: () => void = () => undefined;
  readonly opened: Promise<void> = new Promise((resolve) => (this.release = resolve));
  open(): void {
    this.release();
  }
}

/** Polls a condition (tests only: the engine itself never polls). */
export async function waitUntil<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

export async function waitForTaskState(runner: Runner, dagId: string, runId: string, taskId: string, state: string, timeoutMs = 10_000): Promise<void> {
  await waitUntil(`${dagId}/${runId}/${taskId} to be ${state}`, async () => (await taskStates(runner, dagId, runId))[taskId] === state, timeoutMs);
}
