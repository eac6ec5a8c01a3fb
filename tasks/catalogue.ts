// The world's catalogue as a task sees it: record the live one after the DDL (world_initialize's
// record_catalogue), and on a ready position check that what was built is still there.
import pg from "pg";
import { loadStandConfig } from "../src/config/stand.ts";
import { compareCatalogue, describeCatalogueDrift, readBuiltCatalogue, readLiveCatalogue, recordCatalogue } from "../src/world/catalogue.ts";
import { throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/io.ts";
import { runnerDatabaseUrl } from "../src/world/schema-ledger.ts";

async function withRunnerDb<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: runnerDatabaseUrl(), application_name: "world-catalogue" });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function unreachableError(step: string, unreachable: Record<string, string>): WorldTaskError | undefined {
  const nodes = Object.entries(unreachable);
  if (nodes.length === 0) return undefined;
  return new WorldTaskError(step, `cannot read the catalogue of ${nodes.map(([n, why]) => `${n} (${why})`).join(", ")}; is the node up? (make check-services)`);
}

/** Records every column of the world's databases on every node, as built by this run. */
export async function recordWorldCatalogue(io: TaskIo & { runId: string }): Promise<number> {
  const step = "record_catalogue";
  throwIfAborted(io.signal, step);
  const live = await readLiveCatalogue(loadStandConfig());
  const unreachable = unreachableError(step, live.unreachable);
  if (unreachable) throw unreachable;
  await withRunnerDb((client) => recordCatalogue(client, io.runId, live.columns));
  const tables = new Set(live.columns.map((c) => `${c.node} ${c.database}.${c.table}`)).size;
  io.log(`catalogue recorded: ${live.columns.length} columns of ${tables} tables on ${Object.keys(live.databases).join(", ")}`);
  return live.columns.length;
}

/** On a ready position: the drift between the recorded catalogue and the live one (empty when all is there). */
export async function checkWorldCatalogue(io: TaskIo): Promise<string | undefined> {
  const step = "read_position";
  const config = loadStandConfig();
  const [built, live] = await Promise.all([withRunnerDb(readBuiltCatalogue), readLiveCatalogue(config)]);
  const unreachable = unreachableError(step, live.unreachable);
  if (unreachable) throw unreachable;
  const drift = compareCatalogue(built.columns, live, config.clickhouse.nodes.map((n) => n.name));
  const scope = built.runId === null ? "the world's databases (no catalogue recorded for this world)" : `the catalogue recorded by ${built.runId}`;
  io.log(`checked ${scope} against every node: ${drift.length === 0 ? "all present" : `${drift.length} missing or changed`}`);
  return drift.length === 0 ? undefined : describeCatalogueDrift(drift);
}
