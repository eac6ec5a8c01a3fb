// Dropping the application databases (world_recreate's first destructive step): stg first, so the
// ClickHouse Kafka readers stop existing and release their consumer groups, then dm dds ods dic.
// Runs as `lifecycle` from node 1, ON CLUSTER, SYNC where the server has it (18.16 drops in place).
// Each drop waits first until no replicated table of the database is readonly on any node: 18.16
// dropping a database whose replica lost its ZooKeeper session (a ZooKeeper restart a moment ago)
// refuses that table but unlinks its metadata, leaving its data directory behind, and every later
// DROP DATABASE then fails with "Directory not empty" (seen on the test stand after a keeper test).
import { connectClickHouse, clickhouseNodeConfig, detectPlatform, quoteIdentifier, quoteString } from "../src/clickhouse/index.ts";
import { loadStandConfig, type StandConfig } from "../src/config/index.ts";
import { APPLICATION_DATABASES, sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { errorMessage } from "../src/errors.ts";

export interface DropApplicationDatabasesInput extends TaskIo {
  config?: StandConfig;
  /** How long a database's readonly replicas are waited for before the drop fails (default 120 s). */
  readonlyWaitMs?: number;
}

/** "node db.table" of every replicated table of `database` that is readonly now (its ZooKeeper session is lost or being restored). */
async function readonlyReplicas(config: StandConfig, database: string): Promise<string[]> {
  const found = await Promise.all(
    config.clickhouse.nodes.map(async (node) => {
      const ch = connectClickHouse({ node: node.name, account: "lifecycle", config, requestTimeoutMs: 10_000 });
      try {
        const rows = await ch.query<{ table: string }>(`SELECT table FROM system.replicas WHERE database = ${quoteString(database)} AND is_readonly ORDER BY table`);
        return rows.map((r) => `${node.name} ${database}.${r.table}`);
      } finally {
        await ch.close();
      }
    }),
  );
  return found.flat();
}

/**
 * Waits until no replicated table of `database` is readonly on any node (`probe` lists them: by
 * default system.replicas of every node); says what it waits for, fails naming them at the deadline.
 */
export async function waitForWritableReplicas(
  input: DropApplicationDatabasesInput,
  database: string,
  probe: (database: string) => Promise<string[]>,
): Promise<void> {
  const waitMs = input.readonlyWaitMs ?? 120_000;
  const started = Date.now();
  let readonly = await probe(database);
  let saidAt = Number.NEGATIVE_INFINITY;
  while (readonly.length > 0) {
    const waited = Date.now() - started;
    if (waited >= waitMs) {
      throw new WorldTaskError(
        "dropApplicationDatabases",
        `database ${database} not dropped: ${readonly.length} replicated table(s) still readonly after ${Math.round(waited / 1000)} s ` +
          `(${readonly.join(", ")}): their ZooKeeper session is lost. Is ZooKeeper up (make check-services)? Run world_recreate again once it is.`,
      );
    }
    if (waited - saidAt >= 5_000) {
      input.log(`waiting for ${readonly.length} readonly replica(s) of ${database} to reconnect to ZooKeeper before dropping it (${readonly.join(", ")}; ${Math.round(waited / 1000)} s so far)`);
      saidAt = waited;
    }
    await sleepUnlessAborted(500, input.signal, "dropApplicationDatabases");
    readonly = await probe(database);
  }
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
      await waitForWritableReplicas(input, database, (db) => readonlyReplicas(config, db));
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
