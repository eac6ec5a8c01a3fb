// The login throttle as the stand's runners keep it: in the runner's Postgres (runner.login_throttle,
// made by the runner's migrations), so two runners of a pool, each with its own connection pool,
// count the same guesses: wrong passwords tried on one hold the name on the other, and a success on
// the other clears it for both. Each test has a database of its own, fresh as on a new machine (CI
// once failed here: the table was made by the library at start, and a fresh database had no
// `runner` schema yet).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type pg from "pg";
import { createTestDatabase } from "../../testkit/runner/runner-db.ts";
import { LoginThrottle } from "../../src/api/login-throttle.ts";
import { migrate } from "../../src/migrator.ts";
import { createPool } from "../../src/runner/db.ts";
import { RUNNER_MIGRATIONS } from "../../src/runner/migrate.ts";

/** Two connection pools (two runners) on one fresh database. */
async function withTwoPools(work: (pools: [pg.Pool, pg.Pool]) => Promise<void>): Promise<void> {
  const db = await createTestDatabase();
  const pools: [pg.Pool, pg.Pool] = [createPool(db.url, 2), createPool(db.url, 2)];
  try {
    await work(pools);
  } finally {
    for (const pool of pools) await pool.end();
    await db.drop();
  }
}

describe("login throttle in Postgres, shared by two runners", () => {
  it("guesses counted by one runner hold the name on the other; a success on the other clears it", () =>
    withTwoPools(async (pools) => {
      await migrate(pools[0], RUNNER_MIGRATIONS); // as the runner's start does, before its API counts logins
      const limits = { per_user: 4, per_address: 1000, window_seconds: 120 };
      const [one, two] = await Promise.all(pools.map((pool) => LoginThrottle.inPostgres(pool, limits)));
      assert.ok(one && two);
      const user = "throttle-test";
      for (let i = 0; i < 2; i++) await one.failed(user, "127.0.0.9");
      assert.equal(await two.refusal(user, "127.0.0.9"), undefined, "2 of 4: not held yet");
      for (let i = 0; i < 2; i++) await two.failed(user, "127.0.0.9");
      const held = await one.refusal(user, "127.0.0.9");
      assert.equal(held?.by, "user", "4 guesses over two runners reach the limit of 4");
      assert.ok(held.retryAfterSeconds > 0 && held.retryAfterSeconds <= 120);
      assert.equal((await two.refusal(user, "127.0.0.9"))?.by, "user", "the other runner sees it too");
      const counted = await pools[0].query<{ key: string; points: number }>("select key, points from runner.login_throttle order by key");
      assert.deepEqual(
        counted.rows.map((r) => [r.key.startsWith("login_user") ? "user" : "address", r.points]),
        [["address", 4], ["user", 4]],
        "the counts are rows of the shared table, not each process's memory",
      );
      await two.succeeded(user);
      assert.equal(await one.refusal(user, "127.0.0.9"), undefined, "cleared for both");
      const { rows } = await pools[0].query<{ n: string }>("select count(*) as n from runner.login_throttle where key like 'login_user%'");
      assert.equal(Number(rows[0]?.n), 0, "the name's row is gone from the shared table");
    }));

  it("refuses to count on a database the runner's migrations have not made, naming the migration", () =>
    withTwoPools(async ([pool]) => {
      await assert.rejects(LoginThrottle.inPostgres(pool), /runner\.login_throttle is missing.*000016_login_throttle\.sql/);
      await migrate(pool, RUNNER_MIGRATIONS);
      assert.ok(await LoginThrottle.inPostgres(pool), "once migrated, it counts");
    }));
});
