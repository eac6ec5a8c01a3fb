// The world's and the loader's tables are their owners' migrations (src/world/migrations,
// src/loader/migrations); they were runner migrations 5, 8 and 13 until b905464. A database built by
// that code (its 13 runner files, vendored verbatim in fixtures/migrations-b905464, applied as it
// applied them) upgrades without losing or changing a row, ends in the shape a fresh database gets,
// and a second start changes nothing. Red paths: a retired file that this database applied in
// another text, and an applied world or loader migration edited, refuse naming the file.
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { before, describe, it } from "node:test";
import type pg from "pg";
import { LOADER_MIGRATIONS } from "../../src/loader/migrate.ts";
import { readIngestControl, requestIngest } from "../../src/loader/control.ts";
import { type Migration, type MigrationSet, MigrationChangedError, knownMigrations, migrate, migrationChecksum } from "../../src/migrator.ts";
import { createPool } from "../../src/runner/db.ts";
import { RUNNER_MIGRATIONS } from "../../src/runner/migrate.ts";
import { readBuiltCatalogue } from "../../src/world/catalogue.ts";
import { WORLD_MIGRATIONS } from "../../src/world/migrate.ts";
import { readWorldBuild, recordAppliedDdl } from "../../src/world/schema-ledger.ts";
import { type TestDatabase, createTestDatabase } from "../../testkit/runner/runner-db.ts";

const FIXTURE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "migrations-b905464");
/** How b905464 migrated: its runner files, ledger runner.migrations, lock (7300, 1), nothing retired. */
const B905464: MigrationSet = { ...RUNNER_MIGRATIONS, dir: FIXTURE_DIR, retired: [] };
const SETS = { runner: RUNNER_MIGRATIONS, world: WORLD_MIGRATIONS, loader: LOADER_MIGRATIONS };
type Owner = keyof typeof SETS;
const OWNER_SCHEMAS = ["runner", "world", "loader"];

async function withDatabase<T>(work: (pool: pg.Pool, db: TestDatabase) => Promise<T>): Promise<T> {
  const db = await createTestDatabase();
  const pool = createPool(db.url, 3);
  try {
    return await work(pool, db);
  } finally {
    await pool.end();
    await db.drop();
  }
}

async function rows(pool: pg.Pool, sql: string): Promise<unknown[]> {
  return (await pool.query<Record<string, unknown>>(sql)).rows;
}

/** A world built by b905464: two DDL runs in the ledger, a catalogue, the loader asked to consume and reporting. */
async function seedB905464World(pool: pg.Pool): Promise<void> {
  const sha = (c: string) => c.repeat(64);
  await pool.query(
    `insert into runner.schema_ledger (file, checksum, statements, dag_id, run_id, task_id, server_version, applied_at) values
       ('000_databases.sql', $1, 5, 'world_initialize', 'run_1', 'apply_ddl', '18.16.1', '2024-01-01T00:00:00Z'),
       ('010_stg.sql',       $2, 7, 'world_initialize', 'run_1', 'apply_ddl', '18.16.1', '2024-01-01T00:00:01Z'),
       ('000_databases.sql', $1, 5, 'world_initialize', 'run_2', 'apply_ddl', '18.16.1', '2024-01-02T00:00:00Z')`,
    [sha("a"), sha("b")],
  );
  await pool.query(
    `insert into runner.schema_catalogue (run_id, node, database, table_name, column_name, column_type, recorded_at) values
       ('run_2', 'ch1', 'stg', 'hits', 'event_time', 'DateTime', '2024-01-02T00:00:05Z'),
       ('run_2', 'ch1', 'stg', 'hits', 'user_id', 'UInt64', '2024-01-02T00:00:05Z'),
       ('run_2', 'ch2', 'stg', 'hits', 'user_id', 'UInt64', '2024-01-02T00:00:05Z')`,
  );
  await pool.query("update loader.control set desired = 'consuming', generation = 7, requested_by = 'world_initialize/run_2/start_ingest'");
  await pool.query("insert into loader.status (id, state, generation, pid, detail) values (1, 'consuming', 7, 4242, 'hits: 2 partitions')");
}

/** Every row of the world's and the loader's tables, wherever they live now. */
async function ownerRows(pool: pg.Pool, ledgerSchema: "runner" | "world"): Promise<Record<string, unknown[]>> {
  return {
    ledger: await rows(pool, `select * from ${ledgerSchema}.schema_ledger order by id`),
    catalogue: await rows(pool, `select * from ${ledgerSchema}.schema_catalogue order by id`),
    control: await rows(pool, "select * from loader.control order by id"),
    // the columns of then and now (loader migration 2 keyed the rows by instance instead of id = 1)
    status: await rows(pool, "select state, generation, pid, detail, heartbeat_at from loader.status order by pid"),
  };
}

async function ledgers(pool: pg.Pool): Promise<Record<string, unknown[]>> {
  return Object.fromEntries(await Promise.all(OWNER_SCHEMAS.map(async (s) => [s, await rows(pool, `select * from ${s}.migrations order by id`)] as const)));
}

/** The shape of the owners' schemas: tables, columns, constraints, indexes, sequences, functions, triggers. */
async function schemaShape(pool: pg.Pool): Promise<Record<string, unknown[]>> {
  const q = (sql: string): Promise<unknown[]> => pool.query<Record<string, unknown>>(sql, [OWNER_SCHEMAS]).then((r) => r.rows);
  return {
    relations: await q(`select n.nspname, c.relname, c.relkind from pg_class c join pg_namespace n on n.oid = c.relnamespace
                         where n.nspname = any($1) order by 1, 2`),
    columns: await q(`select table_schema, table_name, column_name, ordinal_position, data_type, is_nullable, column_default,
                             is_identity, identity_generation from information_schema.columns where table_schema = any($1) order by 1, 2, 4`),
    constraints: await q(`select n.nspname, c.conrelid::regclass::text as rel, c.conname, c.contype, pg_get_constraintdef(c.oid) as def
                            from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = any($1) order by 1, 2, 3`),
    indexes: await q("select schemaname, tablename, indexname, indexdef from pg_indexes where schemaname = any($1) order by 1, 2, 3"),
    sequences: await q(`select sequence_schema, sequence_name, data_type, start_value, increment from information_schema.sequences
                         where sequence_schema = any($1) order by 1, 2`),
    functions: await q(`select n.nspname, p.proname, pg_get_function_identity_arguments(p.oid) as args, md5(pg_get_functiondef(p.oid)) as def
                          from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = any($1) and p.prokind in ('f', 'p') order by 1, 2, 3`),
    triggers: await q(`select t.tgrelid::regclass::text as rel, t.tgname, pg_get_triggerdef(t.oid) as def from pg_trigger t
                         join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
                        where n.nspname = any($1) and not t.tgisinternal order by 1, 2`),
  };
}

async function migrateInOrder(pool: pg.Pool, order: readonly Owner[]): Promise<Record<string, number[]>> {
  const applied: Record<string, number[]> = {};
  for (const owner of order) applied[owner] = await migrate(pool, SETS[owner]);
  return applied;
}

const ids = (set: MigrationSet): number[] => knownMigrations(set.dir).map((m) => m.id);

describe("owners' migrations: the upgrade from b905464", () => {
  let freshShape: Record<string, unknown[]>;
  before(async () => {
    freshShape = await withDatabase(async (pool) => {
      assert.deepEqual(await migrateInOrder(pool, ["runner", "world", "loader"]), { runner: ids(RUNNER_MIGRATIONS), world: ids(WORLD_MIGRATIONS), loader: ids(LOADER_MIGRATIONS) });
      return schemaShape(pool);
    });
  });

  it("the fixture is b905464's runner files, and the retired list holds the checksums they shipped with", () => {
    const fixture = knownMigrations(FIXTURE_DIR);
    assert.equal(fixture.length, 13, "000001..000014 (there never was a 000010)");
    const current = new Map(knownMigrations(RUNNER_MIGRATIONS.dir).map((m) => [m.id, m]));
    const retired = new Map((RUNNER_MIGRATIONS.retired ?? []).map((r) => [r.id, r]));
    assert.deepEqual([...retired.keys()], [5, 8, 13]);
    for (const m of fixture) {
      const shipped = retired.get(m.id);
      if (shipped) assert.deepEqual({ name: shipped.name, checksum: shipped.checksum }, { name: m.name, checksum: migrationChecksum(m) }, m.name);
      else assert.equal(current.get(m.id)?.sql, m.sql, `runner migration ${m.id} is still the runner's, unchanged`);
    }
  });

  for (const order of [["runner", "world", "loader"], ["loader", "world", "runner"]] as const) {
    it(`a database built by b905464 starts (${order.join(", ")}): no row lost or changed, the fresh shape, a second start a no-op`, () =>
      withDatabase(async (pool, db) => {
        assert.deepEqual(await migrate(pool, B905464), [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14]);
        await seedB905464World(pool);
        const before = await ownerRows(pool, "runner");
        const runnerLedgerBefore = await rows(pool, "select * from runner.migrations order by id");

        // b905464 had none of the world's or the loader's migrations: every one of theirs applies, and the runner's after 14
        assert.deepEqual(await migrateInOrder(pool, order), { runner: ids(RUNNER_MIGRATIONS).filter((id) => id > 14), world: ids(WORLD_MIGRATIONS), loader: ids(LOADER_MIGRATIONS) });
        assert.deepEqual(await ownerRows(pool, "world"), before, "every row kept as it was, in its new schema");
        assert.deepEqual(await rows(pool, "select instance from loader.status"), [{ instance: "loader" }], "the one status row of before is the first loader's");
        const moved = await rows(pool, "select to_regclass('runner.schema_ledger') as ledger, to_regclass('runner.schema_catalogue') as catalogue");
        assert.deepEqual(moved, [{ ledger: null, catalogue: null }], "nothing left behind in runner");
        assert.deepEqual((await rows(pool, "select * from runner.migrations where id <= 14 order by id")), runnerLedgerBefore, "b905464's ledger rows stand");
        assert.deepEqual(await schemaShape(pool), freshShape, "the shape of a fresh database");

        const ledgersAfter = await ledgers(pool);
        assert.deepEqual(await migrateInOrder(pool, ["runner", "world", "loader"]), { runner: [], world: [], loader: [] }, "a second start applies nothing");
        assert.deepEqual(await ownerRows(pool, "world"), before);
        assert.deepEqual(await ledgers(pool), ledgersAfter);

        // the owners' code reads and writes the moved tables: the build, the catalogue, the control row
        assert.deepEqual((await readWorldBuild(pool)).map((r) => [r.runId, r.file]), [["run_2", "000_databases.sql"]]);
        assert.equal((await readBuiltCatalogue(pool)).columns.length, 3);
        assert.deepEqual(await readIngestControl(pool), { desired: "consuming", generation: 7, requestedBy: "world_initialize/run_2/start_ingest" });
        assert.equal(await requestIngest(pool, "stopped", "a test"), 8);
        const entry = { file: "000_databases.sql", checksum: "c".repeat(64), statements: 5, dagId: "world_initialize", runId: "run_3", taskId: "apply_ddl", serverVersion: "18.16.1" };
        await recordAppliedDdl(entry, db.url);
        const ledgerIds = (await pool.query<{ id: string }>("select id from world.schema_ledger order by id")).rows.map((r) => Number(r.id));
        assert.deepEqual(ledgerIds, [1, 2, 3, 4], "the identity goes on from the moved rows: nothing duplicated");
        assert.deepEqual((await readWorldBuild(pool)).map((r) => r.runId), ["run_3"]);
      }));
  }

  it("the runner process and the loader service starting at once apply each file once", () =>
    withDatabase(async (pool, db) => {
      await migrate(pool, B905464);
      await seedB905464World(pool);
      const before = await ownerRows(pool, "runner");
      const loaderPool = createPool(db.url, 1);
      try {
        const [server, loader] = await Promise.all([migrateInOrder(pool, ["runner", "world", "loader"]), migrate(loaderPool, LOADER_MIGRATIONS)]);
        assert.deepEqual([...(server.loader ?? []), ...loader].sort(), ids(LOADER_MIGRATIONS), "each loader migration applied once, by one of the two");
      } finally {
        await loaderPool.end();
      }
      assert.deepEqual(await ownerRows(pool, "world"), before);
    }));

  it("a retired runner migration that this database applied in another text: the runner refuses, naming the file, and moves nothing", () =>
    withDatabase(async (pool) => {
      const edited = knownMigrations(FIXTURE_DIR).map((m): Migration => (m.name === "schema_ledger" ? { ...m, sql: `${m.sql}\n-- edited before it was applied\n` } : m));
      await migrate(pool, B905464, edited);
      await assert.rejects(migrate(pool, RUNNER_MIGRATIONS), (err: unknown) => {
        assert.ok(err instanceof MigrationChangedError, String(err));
        assert.equal(err.file, "src/runner/migrations/000005_schema_ledger.sql");
        assert.match(err.message, /^runner migration src\/runner\/migrations\/000005_schema_ledger\.sql: it moved to src\/world\/migrations\/000001_schema_ledger\.sql/);
        return true;
      });
      assert.deepEqual(await rows(pool, "select to_regclass('runner.schema_ledger')::text as ledger"), [{ ledger: "runner.schema_ledger" }]);
    }));

  const edited = (ms: Migration[], name: string): Migration[] => ms.map((m) => (m.name === name ? { ...m, sql: `${m.sql}\n-- an edit after it shipped\n` } : m));
  for (const [set, name] of [
    [WORLD_MIGRATIONS, "schema_ledger"],
    [WORLD_MIGRATIONS, "schema_catalogue"],
    [LOADER_MIGRATIONS, "control"],
  ] as const) {
    it(`an applied ${set.owner} migration ${name} edited: its owner refuses, naming the file`, () =>
      withDatabase(async (pool) => {
        await migrate(pool, set);
        const file = `${set.displayDir}/${String(knownMigrations(set.dir).find((m) => m.name === name)?.id).padStart(6, "0")}_${name}.sql`;
        await assert.rejects(migrate(pool, set, edited(knownMigrations(set.dir), name)), (err: unknown) => {
          assert.ok(err instanceof MigrationChangedError, String(err));
          assert.equal(err.file, file);
          assert.match(err.message, new RegExp(`^${set.owner} migration ${file.replace(/\./g, "\\.")}: its text changed after it was applied`));
          return true;
        });
        assert.deepEqual(await migrate(pool, set), [], "the files as shipped still pass");
      }));
  }

  it("an applied world migration removed from the code: the world's migrator refuses, naming the file", () =>
    withDatabase(async (pool) => {
      await migrate(pool, WORLD_MIGRATIONS);
      await assert.rejects(migrate(pool, WORLD_MIGRATIONS, knownMigrations(WORLD_MIGRATIONS.dir).filter((m) => m.id !== 1)), (err: unknown) => {
        assert.ok(err instanceof MigrationChangedError, String(err));
        assert.equal(err.file, "src/world/migrations/000001_schema_ledger.sql");
        assert.match(err.message, /gone from the code/);
        return true;
      });
    }));
});
