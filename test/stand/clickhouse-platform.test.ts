// The platform layer: what the stand's server reports, checked against the server itself, and the
// modern rendering of the same fragments without a server.
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { connectClickHouse } from "../../src/clickhouse/client.ts";
import { CH_ERROR, clickhouseErrorCode } from "../../src/clickhouse/errors.ts";
import { detectPlatform, platformForVersion } from "../../src/clickhouse/platform.ts";
import { kafkaEngineClause } from "../../bench/kafka-engine.ts";

const ch = connectClickHouse();
after(() => ch.close());

test("the stand's server is 18.16 and its flags match what it really accepts", async () => {
  const platform = await detectPlatform(ch);
  assert.equal(`${platform.major}.${platform.minor}`, "18.16");
  assert.equal(platform.hasSqlRoles, false);
  assert.equal(platform.hasJsonFunctions, false);
  assert.equal(platform.distributedSyncInsertSetting, "insert_distributed_sync");

  // the setting the platform names exists on the server...
  const settings = await ch.query<{ name: string }>(`SELECT name FROM system.settings WHERE name = '${platform.distributedSyncInsertSetting}'`);
  assert.equal(settings.length, 1);
  // ...and the flags that say "absent" are absent
  const missing = await ch.query("SELECT JSONExtractString('{}', 'a')").then(() => undefined, clickhouseErrorCode);
  assert.equal(missing, CH_ERROR.UNKNOWN_FUNCTION);
  const roles = await ch.command("CREATE ROLE stand_probe_role").then(() => undefined, clickhouseErrorCode);
  assert.equal(roles, CH_ERROR.SYNTAX_ERROR);
});

test("the benches' Kafka readers: 18.16 leaves out Kafka settings it does not know; a modern server gets them", () => {
  const spec = { brokers: "127.0.0.1:29092", topic: "hits", group: "clickstream_hits", format: "JSONEachRow" as const, skipBrokenMessages: 10 };
  const old = platformForVersion("18.16.1");
  assert.equal(
    kafkaEngineClause(old, spec),
    "ENGINE = Kafka SETTINGS kafka_broker_list = '127.0.0.1:29092', kafka_topic_list = 'hits', kafka_group_name = 'clickstream_hits', kafka_format = 'JSONEachRow'",
  );
  const modern = platformForVersion("24.8.4.13");
  assert.match(kafkaEngineClause(modern, spec), /kafka_skip_broken_messages = 10$/);
});

test("a modern version renders the modern names without a server", () => {
  const modern = platformForVersion("24.8.4.13");
  assert.equal(modern.hasSqlRoles, true);
  assert.equal(modern.hasJsonFunctions, true);
  assert.equal(modern.hasDateTime64, true);
  assert.equal(modern.supportsRawBlob, true);
  assert.deepEqual(modern.syncDistributedInsertSettings(), { distributed_foreground_insert: 1 });
  assert.deepEqual(modern.lowCardinalitySettings, {});
  assert.deepEqual(platformForVersion("18.16.1").syncDistributedInsertSettings(), { insert_distributed_sync: 1 });
  assert.throws(() => platformForVersion("not a version"), /not a ClickHouse version/);
});
