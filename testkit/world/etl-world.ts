// A fresh world for the ETL tests, built the way world_initialize builds it: the application
// databases dropped ON CLUSTER, then the canonical DDL files applied in name order as lifecycle
// (tasks/ddl.ts) — all but the hits ingest (90-*), whose Kafka reader would pour whatever the
// shared `hits` topic holds into ODS. The tests then insert their own small fixture directly.
// Callers hold the world lock (testkit/stand/world-lock.ts).
import { connectClickHouse, type StandClickHouse, quoteIdentifier } from "../../src/clickhouse/index.ts";
import { loadStandConfig } from "../../src/config/index.ts";
import { APPLICATION_DATABASES } from "../../src/world/index.ts";
import { applyDdlFile, listDdlFiles } from "../../tasks/index.ts";

const config = loadStandConfig();

export function quietIo(): { signal: AbortSignal; log: (line: string) => void } {
  return { signal: new AbortController().signal, log: () => {} };
}

/** The last DDL file the ETL tests apply: everything before the hits ingest. */
const LAST_FILE_BEFORE_INGEST = "89";

export async function rebuildWorldWithoutIngest(log: (line: string) => void = () => {}): Promise<void> {
  const lifecycle = connectClickHouse({ account: "lifecycle", config, requestTimeoutMs: 300_000 });
  try {
    for (const db of APPLICATION_DATABASES) {
      await lifecycle.command(`DROP DATABASE IF EXISTS ${quoteIdentifier(db)} ON CLUSTER ${quoteIdentifier(config.clickhouse.cluster)}`);
    }
  } finally {
    await lifecycle.close();
  }
  const files = (await listDdlFiles()).filter((f) => f < LAST_FILE_BEFORE_INGEST);
  for (const file of files) {
    const applied = await applyDdlFile({ file, config, ...quietIo() });
    log(`applied ${applied.file} (${applied.statements} statements)`);
  }
}

/** An admin connection for fixtures and for reading results (not what the tasks use). */
export function adminSession(node?: string): StandClickHouse {
  return connectClickHouse({ account: "admin", node, config });
}

/** Inserts rows through a Distributed table and waits until they are on their shards. */
export async function insertDistributed(admin: StandClickHouse, table: string, rows: readonly object[]): Promise<void> {
  await admin.insert(table, rows, { insert_distributed_sync: 1 });
}

export { config as standConfig };
