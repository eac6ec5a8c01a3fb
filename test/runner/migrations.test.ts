// Schema migrations: applied in order under one lock, a second pass is a no-op, and a database
// that holds a migration newer than the code is refused (also by createRunner.start).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { defineDag } from "../../src/runner/dag.ts";
import { createPool } from "../../src/runner/db.ts";
import { MigrationChangedError, SchemaTooNewError } from "../../src/runner/errors.ts";
import { knownMigrations, migrate, migrationChecksum } from "../../src/runner/migrate.ts";
import { createRunner } from "../../src/runner/runner.ts";
import { type TestDatabase, createTestDatabase, silentLogger, withClient } from "../../harness/runner-db.ts";

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
      const known = knownMigrations().map((m) => m.id);
      assert.deepEqual(known, [...known].sort((a, b) => a - b));
      assert.deepEqual(await migrate(pool), known);
      const before = await pool.query("select id, name, applied_at from runner.migrations order by id");
      assert.deepEqual(await migrate(pool), []);
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
      const results = await Promise.all(pools.map((pool) => migrate(pool)));
      assert.deepEqual(results.flat().sort(), knownMigrations().map((m) => m.id).sort());
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      await fresh.drop();
    }
  });

  it("refuses a database whose schema is newer than the code", async () => {
    const latest = knownMigrations().at(-1)?.id ?? 0;
    await withClient(db, (c) => c.query("insert into runner.migrations (id, name) values ($1, 'from_the_future')", [latest + 1]));
    const pool = createPool(db.url, 2);
    try {
      await assert.rejects(migrate(pool), (err: unknown) => {
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
      await migrate(pool);
      const recorded = await pool.query<{ id: number; checksum: string }>("select id, checksum from runner.migrations order by id");
      assert.deepEqual(recorded.rows.map((r) => r.checksum), knownMigrations().map(migrationChecksum));
      // a database built by code that recorded no checksums
      await pool.query("update runner.migrations set checksum = null");
      assert.deepEqual(await migrate(pool), []);
      const backfilled = await pool.query<{ id: number; checksum: string }>("select id, checksum from runner.migrations order by id");
      assert.deepEqual(backfilled.rows, recorded.rows, "every checksum backfilled from the files");
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });

  for (const [change, edit] of [
    ["edited", (m: ReturnType<typeof knownMigrations>) => m.map((x, i) => (i === 4 ? { ...x, sql: `${x.sql}\n-- an edit after it shipped\n` } : x))],
    ["renamed", (m: ReturnType<typeof knownMigrations>) => m.map((x, i) => (i === 4 ? { ...x, name: "renamed_later" } : x))],
    ["removed", (m: ReturnType<typeof knownMigrations>) => m.filter((_, i) => i !== 4)],
  ] as const) {
    it(`an applied migration ${change} in the code: migrate refuses, naming the file`, async () => {
      const fresh = await createTestDatabase();
      const pool = createPool(fresh.url, 2);
      try {
        await migrate(pool);
        const target = knownMigrations()[4];
        assert.ok(target);
        await assert.rejects(migrate(pool, edit(knownMigrations())), (err: unknown) => {
          assert.ok(err instanceof MigrationChangedError, String(err));
          assert.match(err.message, new RegExp(`${String(target.id).padStart(6, "0")}_${target.name}\\.sql`));
          assert.match(err.message, /new migration/);
          return true;
        });
        assert.deepEqual(await migrate(pool), [], "the files as shipped still pass");
      } finally {
        await pool.end();
        await fresh.drop();
      }
    });
  }
});
