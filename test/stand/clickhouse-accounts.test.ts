// The accounts declared in the users file, as ClickHouse 18.16 enforces them (docs/stand.md
// "Accounts"). Every refusal reaches the caller naming the account, the node and the statement.
// lifecycle's database allow-list is exact names, so this test uses the two probe databases the users
// file allows for it (ACCOUNT_PROBE_DATABASES) instead of random names.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { loadStandConfig } from "../../src/config/stand.ts";
import { connectClickHouse, type AccountKey, type StandClickHouse } from "../../src/clickhouse/client.ts";
import { CH_ERROR, ClickHouseRefusedError } from "../../src/clickhouse/errors.ts";
import { quoteIdentifier as id } from "../../src/clickhouse/sql.ts";
import { ACCOUNT_PROBE_DATABASES } from "../../src/services/clickhouse-config.ts";
import { randomName } from "../../testkit/stand/live-stand.ts";

const config = loadStandConfig();
const cluster = id(config.clickhouse.cluster);
const [probeDb] = ACCOUNT_PROBE_DATABASES;
const db = id(probeDb);
const sessions: StandClickHouse[] = [];

function as(account: AccountKey, node?: string): StandClickHouse {
  const session = connectClickHouse({ account, node });
  sessions.push(session);
  return session;
}

async function refusal(work: Promise<unknown>): Promise<ClickHouseRefusedError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  const got = err === undefined ? "success" : err instanceof Error ? `${err.name}: ${err.message}` : "a non-Error value";
  assert.ok(err instanceof ClickHouseRefusedError, `expected a refusal, got ${got}`);
  return err;
}

before(async () => {
  await as("admin").command(`DROP DATABASE IF EXISTS ${db} ON CLUSTER ${cluster}`);
});

after(async () => {
  await as("admin").command(`DROP DATABASE IF EXISTS ${db} ON CLUSTER ${cluster}`);
  await Promise.all(sessions.map((s) => s.close()));
});

test("lifecycle creates an application database and its tables ON CLUSTER and reads system.settings", async () => {
  const lifecycle = as("lifecycle");
  await lifecycle.command(`CREATE DATABASE ${db} ON CLUSTER ${cluster}`);
  await lifecycle.command(
    `CREATE TABLE ${db}.t ON CLUSTER ${cluster} (id UInt64)
     ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${probeDb}/t', '{replica}') ORDER BY id`,
  );
  const settings = await lifecycle.query<{ n: string }>("SELECT count() AS n FROM system.settings");
  assert.ok(Number(settings[0]?.n) > 0, "lifecycle reads system.settings");
  for (const node of config.clickhouse.nodes) {
    const found = await as("admin", node.name).query(`SELECT name FROM system.tables WHERE database = '${probeDb}'`);
    assert.equal(found.length, 1, `table on ${node.name}`);
  }
});

test("etl writes and reads application tables but is refused DROP DATABASE, naming the account", async () => {
  const etl = as("etl");
  await etl.insert(`${db}.t`, [{ id: 1 }, { id: 2 }]);
  assert.deepEqual(await etl.query(`SELECT count() AS n FROM ${db}.t`), [{ n: "2" }]);
  const err = await refusal(etl.command(`DROP DATABASE ${db} ON CLUSTER ${cluster}`));
  assert.equal(err.code, CH_ERROR.QUERY_IS_PROHIBITED);
  assert.match(err.message, new RegExp(`user '${config.clickhouse.accounts.etl.user}'`));
  assert.match(err.message, /DROP DATABASE/);
  console.log(`  etl refusal: ${err.message}`);
  // the closest rule 18.16 enforces refuses all DDL for etl, CREATE TABLE included
  await refusal(etl.command(`CREATE TABLE ${db}.x (id UInt64) ENGINE = Memory`));
});

test("reader reads but cannot INSERT; the refusal names the account", async () => {
  const reader = as("reader");
  assert.deepEqual(await reader.query(`SELECT count() AS n FROM ${db}.t`), [{ n: "2" }]);
  const err = await refusal(reader.insert(`${db}.t`, [{ id: 3 }]));
  assert.equal(err.code, CH_ERROR.READONLY);
  assert.match(err.message, new RegExp(`user '${config.clickhouse.accounts.reader.user}'`));
});

test("lifecycle is refused a database outside the application allow-list (server text names the user)", async () => {
  const other = randomName("stand_test_not_allowed");
  const err = await refusal(as("lifecycle").command(`CREATE DATABASE ${id(other)} ON CLUSTER ${cluster}`));
  assert.equal(err.code, CH_ERROR.DATABASE_ACCESS_DENIED);
  assert.match(err.serverText, new RegExp(`for user ${config.clickhouse.accounts.lifecycle.user}`));
});

test("default serves health checks only: no application data, no writes", async () => {
  const health = as("default");
  assert.deepEqual(await health.query("SELECT 1 AS ok"), [{ ok: 1 }]);
  const err = await refusal(health.query(`SELECT count() FROM ${db}.t`));
  assert.equal(err.code, CH_ERROR.DATABASE_ACCESS_DENIED);
});

test("lifecycle drops the application database ON CLUSTER", async () => {
  await as("lifecycle").command(`DROP DATABASE ${db} ON CLUSTER ${cluster}`);
  for (const node of config.clickhouse.nodes) {
    const left = await as("admin", node.name).query(`SELECT name FROM system.databases WHERE name = '${probeDb}'`);
    assert.equal(left.length, 0, `database gone on ${node.name}`);
  }
});
