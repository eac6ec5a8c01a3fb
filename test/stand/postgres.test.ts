// The stand's PostgreSQL: the role from stand.yaml logs in with its password to both databases,
// and the server is configured the way the runner expects (loopback only, room for connections).
import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { loadStandConfig, postgresUrl } from "../../src/config/stand.ts";

const config = loadStandConfig();

async function settingsOf(database: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: postgresUrl(database) });
  await client.connect();
  try {
    const result = await client.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('listen_addresses', 'max_connections', 'port')",
    );
    return Object.fromEntries(result.rows.map((r) => [r.name, r.setting]));
  } finally {
    await client.end();
  }
}

test("the stand role reaches both databases with its password; loopback only, 200 connections", async () => {
  for (const database of [config.postgres.database, config.postgres.runner_database]) {
    const settings = await settingsOf(database);
    assert.deepEqual(settings, { listen_addresses: "127.0.0.1", max_connections: "200", port: String(config.postgres.port) });
  }
});

test("a wrong password is refused (password auth, not trust)", async () => {
  const client = new pg.Client({ connectionString: postgresUrl(config.postgres.database).replace(/:[^:@/]+@/, ":wrong@") });
  await assert.rejects(client.connect(), /password authentication failed/);
  await client.end().catch(() => undefined);
});
