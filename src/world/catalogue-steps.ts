// The world's catalogue as a task sees it: record the live one after the DDL (world_initialize's
// record_catalogue), and on a ready position check that what was built is still there.
import { loadStandConfig } from "../config/index.ts";
import { checkCatalogue, describeCatalogueDrift, readLiveCatalogue, recordCatalogue } from "./catalogue.ts";
import { throwIfAborted, WorldTaskError, type TaskIo } from "./io.ts";
import { withRunnerDb } from "./schema-ledger.ts";

/** The nodes that could not be read, as a task error naming each; undefined when every node answered. */
export function unreachableError(step: string, unreachable: Record<string, string>): WorldTaskError | undefined {
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
  await withRunnerDb((client) => recordCatalogue(client, io.runId, live.columns), "world-catalogue");
  const tables = new Set(live.columns.map((c) => `${c.node} ${c.database}.${c.table}`)).size;
  io.log(`catalogue recorded: ${live.columns.length} columns of ${tables} tables on ${Object.keys(live.databases).join(", ")}`);
  return live.columns.length;
}

/** On a ready position: the drift between the recorded catalogue and the live one (undefined when all is there). */
export async function checkWorldCatalogue(io: TaskIo): Promise<string | undefined> {
  const step = "read_position";
  const check = await withRunnerDb((client) => checkCatalogue(client), "world-catalogue");
  const unreachable = unreachableError(step, check.unreachable);
  if (unreachable) throw unreachable;
  const scope = check.recordedByRun === null ? "the world's databases (no catalogue recorded for this world)" : `the catalogue recorded by ${check.recordedByRun}`;
  io.log(`checked ${scope} against every node: ${check.missing.length === 0 ? "all present" : `${check.missing.length} missing or changed`}`);
  return check.missing.length === 0 ? undefined : describeCatalogueDrift(check.missing);
}
