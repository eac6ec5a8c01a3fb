// Dropping the application databases (world_recreate's first destructive step): stg first, so the
// ClickHouse Kafka readers stop existing and release their consumer groups, then dm dds ods dic.
// Runs as `lifecycle` from node 1, ON CLUSTER, SYNC where the server has it (18.16 drops in place).
import { connectClickHouse, clickhouseNodeConfig } from "../src/clickhouse/client.ts";
import { detectPlatform } from "../src/clickhouse/platform.ts";
import { quoteIdentifier } from "../src/clickhouse/sql.ts";
import { loadStandConfig, type StandConfig } from "../src/config/stand.ts";
import { APPLICATION_DATABASES } from "../src/world/constants.ts";
import { throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/io.ts";
import { errorMessage } from "../src/errors.ts";

export interface DropApplicationDatabasesInput extends TaskIo {
  config?: StandConfig;
}

export async function dropApplicationDatabases(input: DropApplicationDatabasesInput): Promise<void> {
  const config = input.config ?? loadStandConfig();
  const node = clickhouseNodeConfig(undefined, config);
  const clickhouse = connectClickHouse({ node: node.name, account: "lifecycle", config, requestTimeoutMs: 300_000 });
  try {
    const platform = await detectPlatform(clickhouse);
    const cluster = quoteIdentifier(config.clickhouse.cluster);
    for (const database of APPLICATION_DATABASES) {
      throwIfAborted(input.signal, "dropApplicationDatabases");
      const started = Date.now();
      try {
        await clickhouse.command(`DROP DATABASE IF EXISTS ${quoteIdentifier(database)} ON CLUSTER ${cluster}${platform.dropSyncClause}`);
      } catch (err) {
        throw new WorldTaskError(
          "dropApplicationDatabases",
          `dropping database ${database} failed: ${errorMessage(err)}. The world is half-dropped; ` +
            "fix the cause (both ClickHouse nodes up? ZooKeeper up?) and run world_recreate again.",
          { cause: err },
        );
      }
      input.log(`dropped database ${database} on cluster ${config.clickhouse.cluster} (${Date.now() - started} ms)`);
    }
  } finally {
    await clickhouse.close();
  }
}
