// Schema migrations: applied in order under one lock, a second pass is a no-op, and a database
// that holds a migration newer than the code is refused (also by createRunner.start).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { createPool } from "../../src/runner/db.ts";
import type pg from "pg";
import { type Migration, MigrationChangedError, SchemaTooNewError, knownMigrations, migrate, migrationChecksum } from "../../src/migrator.ts";
import { RUNNER_MIGRATIONS } from "../../src/runner/migrate.ts";
import { createRunner } from "../../src/runner/runner.ts";
import { SERVER_MIGRATION_SETS } from "../../src/server/migration-sets.ts";
import { type TestDatabase, createTestDatabase, silentLogger, withClient } from "../../testkit/runner/runner-db.ts";

const runnerFiles = (): Migration[] => knownMigrations(RUNNER_MIGRATIONS.dir);
const migrateRunner = (pool: pg.Pool, migrations?: readonly Migration[]): Promise<number[]> => migrate(pool, RUNNER_MIGRATIONS, migrations);

describe("runner migrations", () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db.drop();
  });

  it("applies every known migration once, in order; a second pass is a no-op", async () => {
    const pool = createPool(db.url, 2);
    try {
      const known = runnerFiles().map((m) => m.id);
      assert.deepEqual(known, [...known].sort((a, b) => a - b));
      assert.deepEqual(await migrateRunner(pool), known);
      const before = await pool.query("select id, name, applied_at from runner.migrations order by id");
      assert.deepEqual(await migrateRunner(pool), []);
      const again = await pool.query("select id, name, applied_at from runner.migrations order by id");
      assert.deepEqual(again.rows, before.rows);
    } finally {
      await pool.end();
    }
  });

  it("two runners migrating at once apply each file exactly once", async () => {
    const fresh = await createTestDatabase();
    const pools = [createPool(fresh.url, 2), createPool(fresh.url, 2)];
    try {
      const results = await Promise.all(pools.map((pool) => migrateRunner(pool)));
      assert.deepEqual(results.flat().sort(), runnerFiles().map((m) => m.id).sort());
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await fresh.drop();
    }
  });

  it("refuses a database whose schema is newer than the code", async () => {
    const latest = runnerFiles().at(-1)?.id ?? 0;
    await withClient(db, (c) => c.query("insert into runner.migrations (id, name) values ($1, 'from_the_future')", [latest + 1]));
    const pool = createPool(db.url, 2);
    try {
      await assert.rejects(migrateRunner(pool), (err: unknown) => {
        assert.ok(err instanceof SchemaTooNewError);
        assert.equal(err.databaseVersion, latest + 1);
        assert.equal(err.codeVersion, latest);
        return true;
      });
    } finally {
      await pool.end();
    }
    const runner = createRunner({
      pgUrl: db.url,
      dags: [defineDag({ id: "any" }).task("a", () => undefined).build()],
      concurrency: 1,
      leaseSeconds: 5,
      logger: silentLogger,
    });
    try {
      await assert.rejects(runner.start(), SchemaTooNewError);
    } finally {
      await runner.stop();
    }
  });

  it("records each applied file's checksum; a database from before checksums takes the files as they are", async () => {
    const fresh = await createTestDatabase();
    const pool = createPool(fresh.url, 2);
    try {
      await migrateRunner(pool);
      const recorded = await pool.query<{ id: number; checksum: string }>("select id, checksum from runner.migrations order by id");
      assert.deepEqual(recorded.rows.map((r) => r.checksum), runnerFiles().map(migrationChecksum));
      // a database built by code that recorded no checksums
      await pool.query("update runner.migrations set checksum = null");
      assert.deepEqual(await migrateRunner(pool), []);
      const backfilled = await pool.query<{ id: number; checksum: string }>("select id, checksum from runner.migrations order by id");
      assert.deepEqual(backfilled.rows, recorded.rows, "every checksum backfilled from the files");
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });

  // a file that is still the runner's (the retired ones are the next tests')
  const TARGET = "trigger_order";
  const isTarget = (m: Migration): boolean => m.name === TARGET;
  for (const [change, edit] of [
    ["edited", (m: Migration[]) => m.map((x) => (isTarget(x) ? { ...x, sql: `${x.sql}\n-- an edit after it shipped\n` } : x))],
    ["renamed", (m: Migration[]) => m.map((x) => (isTarget(x) ? { ...x, name: "renamed_later" } : x))],
    ["removed", (m: Migration[]) => m.filter((x) => !isTarget(x))],
  ] as const) {
    it(`an applied migration ${change} in the code: migrate refuses, naming the file`, async () => {
      const fresh = await createTestDatabase();
      const pool = createPool(fresh.url, 2);
      try {
        await migrateRunner(pool);
        const target = runnerFiles().find(isTarget);
        assert.ok(target);
        await assert.rejects(migrateRunner(pool, edit(runnerFiles())), (err: unknown) => {
          assert.ok(err instanceof MigrationChangedError, String(err));
          assert.match(err.message, new RegExp(`^runner migration src/runner/migrations/${String(target.id).padStart(6, "0")}_${target.name}\\.sql`));
          assert.match(err.message, /new migration/);
          return true;
        });
        assert.deepEqual(await migrateRunner(pool), [], "the files as shipped still pass");
      } finally {
        await pool.end();
        await fresh.drop();
      }
    });
  }

  it("a retired migration's row (moved to its owner) is accepted only with the checksum it shipped with", async () => {
    const fresh = await createTestDatabase();
    const pool = createPool(fresh.url, 2);
    const retired = RUNNER_MIGRATIONS.retired?.find((r) => r.name === "schema_ledger");
    assert.ok(retired);
    try {
      await migrateRunner(pool);
      assert.ok(!runnerFiles().some((m) => m.id === retired.id), "the retired file is gone from the runner's folder");
      await pool.query("insert into runner.migrations (id, name, checksum) values ($1, $2, $3)", [retired.id, retired.name, retired.checksum]);
      assert.deepEqual(await migrateRunner(pool), [], "as it shipped: accepted");

      await pool.query("update runner.migrations set checksum = null where id = $1", [retired.id]);
      assert.deepEqual(await migrateRunner(pool), []);
      const backfilled = await pool.query<{ checksum: string }>("select checksum from runner.migrations where id = $1", [retired.id]);
      assert.equal(backfilled.rows[0]?.checksum, retired.checksum, "a row from before checksums takes the shipped one");

      await pool.query("update runner.migrations set checksum = $2 where id = $1", [retired.id, "0".repeat(64)]);
      await assert.rejects(migrateRunner(pool), (err: unknown) => {
        assert.ok(err instanceof MigrationChangedError, String(err));
        assert.match(err.message, /^runner migration src\/runner\/migrations\/000005_schema_ledger\.sql: it moved to src\/world\/migrations\/000001_schema_ledger\.sql/);
        assert.match(err.message, /applied another text \(sha256 000000000000…\)/);
        return true;
      });

      await pool.query("update runner.migrations set checksum = $2, name = 'another_name' where id = $1", [retired.id, retired.checksum]);
      await assert.rejects(migrateRunner(pool), (err: unknown) => {
        assert.ok(err instanceof MigrationChangedError, String(err));
        assert.match(err.message, /000005_another_name\.sql: it was applied to this database and is gone from the code/);
        return true;
      });
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });

  it("createRunner applies the sets it is given after its own (the server's: the world's, the loader's)", async () => {
    const fresh = await createTestDatabase();
    const runner = createRunner({
      pgUrl: fresh.url,
      dags: [defineDag({ id: "any" }).task("a", () => undefined).build()],
      concurrency: 1,
      leaseSeconds: 5,
      logger: silentLogger,
      migrationSets: SERVER_MIGRATION_SETS,
    });
    try {
      await runner.start();
    } finally {
      await runner.stop();
    }
    try {
      await withClient(fresh, async (c) => {
        for (const set of SERVER_MIGRATION_SETS) {
          const { rows } = await c.query<{ id: number }>(`select id from ${set.schema}.migrations order by id`);
          assert.deepEqual(rows.map((r) => r.id), knownMigrations(set.dir).map((m) => m.id), set.owner);
        }
      });
    } finally {
      await fresh.drop();
    }
  });
});
