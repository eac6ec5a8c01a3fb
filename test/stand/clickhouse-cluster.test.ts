// The two-node cluster works as the world needs it: ON CLUSTER DDL, ReplicatedMergeTree shards and a
// Distributed table over them; rows inserted on node 1 are read whole on node 2, and each node's
// local table holds only its shard.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { loadStandConfig } from "../../src/config/stand.ts";
import { connectClickHouse, type StandClickHouse } from "../../src/clickhouse/client.ts";
import { detectPlatform, type Platform } from "../../src/clickhouse/platform.ts";
import { quoteIdentifier as id } from "../../src/clickhouse/sql.ts";
import { randomName } from "../../testkit/stand/live-stand.ts";

const config = loadStandConfig();
const cluster = config.clickhouse.cluster;
const [node1, node2] = config.clickhouse.nodes;
const db = randomName("stand_test_cluster");
let ch1: StandClickHouse;
let ch2: StandClickHouse;
let platform: Platform;

before(async () => {
  assert.ok(node1 && node2, "the stand config must have two ClickHouse nodes");
  ch1 = connectClickHouse({ node: node1.name });
  ch2 = connectClickHouse({ node: node2.name });
  platform = await detectPlatform(ch1);
});

after(async () => {
  await ch1.command(`DROP DATABASE IF EXISTS ${id(db)} ON CLUSTER ${id(cluster)}`);
  await ch1.close();
  await ch2.close();
});

test("ON CLUSTER DDL creates the database, a ReplicatedMergeTree and a Distributed table on both nodes", async () => {
  await ch1.command(`CREATE DATABASE ${id(db)} ON CLUSTER ${id(cluster)}`);
  await ch1.command(
    `CREATE TABLE ${id(db)}.events ON CLUSTER ${id(cluster)} (id UInt64, label String)
     ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${db}/events', '{replica}') ORDER BY id`,
  );
  // sharding key `id`: even ids go to shard 1 (node 1), odd ids to shard 2 (node 2)
  await ch1.command(
    `CREATE TABLE ${id(db)}.events_dist ON CLUSTER ${id(cluster)} AS ${id(db)}.events
     ENGINE = Distributed(${id(cluster)}, ${id(db)}, events, id)`,
  );
  for (const ch of [ch1, ch2]) {
    const tables = await ch.query<{ name: string }>(`SELECT name FROM system.tables WHERE database = '${db}' ORDER BY name`);
    assert.deepEqual(tables.map((t) => t.name), ["events", "events_dist"], `tables on ${ch.target.node}`);
  }
});

test("rows inserted on node 1 through Distributed are read whole on node 2, each shard holding its half", async () => {
  const rows = Array.from({ length: 20 }, (_, i) => ({ id: i + 1, label: `row-${i + 1}` }));
  await ch1.insert(`${id(db)}.events_dist`, rows, platform.syncDistributedInsertSettings());

  const whole = await ch2.query<{ n: string; ids: string }>(`SELECT count() AS n, uniqExact(id) AS ids FROM ${id(db)}.events_dist`);
  assert.deepEqual(whole, [{ n: "20", ids: "20" }]);

  const local1 = await ch1.query<{ n: string; odd: string }>(`SELECT count() AS n, countIf(id % 2 = 1) AS odd FROM ${id(db)}.events`);
  const local2 = await ch2.query<{ n: string; even: string }>(`SELECT count() AS n, countIf(id % 2 = 0) AS even FROM ${id(db)}.events`);
  assert.deepEqual(local1, [{ n: "10", odd: "0" }], "node 1's local table holds only even ids");
  assert.deepEqual(local2, [{ n: "10", even: "0" }], "node 2's local table holds only odd ids");
});
