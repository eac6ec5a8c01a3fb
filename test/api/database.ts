// A fresh Postgres database per test file on the stand's server ($STAND_CONFIG), dropped after.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadStandConfig, postgresUrl } from "../../src/config/stand.ts";

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function onMaintenanceDb<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresUrl(loadStandConfig().postgres.database) });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `test_${label.replace(/[^a-z0-9_]/g, "_")}_${randomBytes(4).toString("hex")}`;
  await onMaintenanceDb((client) => client.query(`CREATE DATABASE ${quoteIdent(name)}`));
  return {
    name,
    url: postgresUrl(name),
    async drop() {
      await onMaintenanceDb((client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
    },
  };
}
