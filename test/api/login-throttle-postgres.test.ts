// The login throttle as the stand's runners keep it: in the runner's Postgres (runner.login_throttle),
// so two runners of a pool, each with its own connection pool, count the same guesses: wrong
// passwords tried on one hold the name on the other, and a success on the other clears it for both.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import pg from "pg";
import { LoginThrottle } from "../../src/api/login-throttle.ts";
import { loadStandConfig, postgresUrl } from "../../src/config/stand.ts";

const config = loadStandConfig();
const pools = [0, 1].map(() => new pg.Pool({ connectionString: postgresUrl(config.postgres.runner_database, config), max: 2 }));
after(async () => {
  for (const pool of pools) await pool.end();
});

describe("login throttle in Postgres, shared by two runners", () => {
  it("guesses counted by one runner hold the name on the other; a success on the other clears it", async () => {
    const limits = { per_user: 4, per_address: 1000, window_seconds: 120 };
    const [one, two] = await Promise.all(pools.map((pool) => LoginThrottle.inPostgres(pool, limits)));
    assert.ok(one && two);
    const user = `throttle-test-${randomBytes(4).toString("hex")}`; // a name of its own: nothing else counts it
    for (let i = 0; i < 2; i++) await one.failed(user, "127.0.0.9");
    for (let i = 0; i < 2; i++) await two.failed(user, "127.0.0.9");
    const held = await one.refusal(user, "127.0.0.9");
    assert.equal(held?.by, "user", "4 guesses over two runners reach the limit of 4");
    assert.ok(held.retryAfterSeconds > 0 && held.retryAfterSeconds <= 120);
    assert.equal((await two.refusal(user, "127.0.0.9"))?.by, "user", "the other runner sees it too");
    await two.succeeded(user);
    assert.equal(await one.refusal(user, "127.0.0.9"), undefined, "cleared for both");
    const { rows } = await pools[0]!.query<{ n: string }>("select count(*) as n from runner.login_throttle where key like $1", [`%${user}%`]);
    assert.equal(Number(rows[0]?.n), 0, "the name's row is gone from the shared table");
  });
});
