// The world's snapshots as a user lists and removes them (make snapshots, make snapshot-rm, the
// snapshot list route and the World page). Saving and restoring are DAGs (world_snapshot,
// world_restore); listing reads the files under the state directory and says whether each snapshot's
// schema is today's sql/ddl/, so a list never offers a restore that would be refused for it.
import type { StandConfig } from "../config/index.ts";
import { errorMessage } from "../errors.ts";
import { standPaths } from "../services/index.ts";
import { SnapshotStore, schemaChecksum } from "./store.ts";
import type { SnapshotSummary } from "./restores.ts";
import { currentDdlFiles } from "../world/index.ts";

export type SnapshotRow = SnapshotSummary;

export async function snapshotRows(config: StandConfig): Promise<SnapshotRow[]> {
  const store = new SnapshotStore(config, standPaths(config));
  const today = schemaChecksum(await currentDdlFiles());
  return store.list().map((s) => {
    const schema = s.manifest ? schemaChecksum(s.manifest.ddl) : null;
    return {
      name: s.name,
      state: s.state,
      position: s.manifest?.position ?? null,
      takenAt: s.manifest?.takenAt ?? null,
      ownBytes: s.ownBytes,
      sharedBytes: s.sharedBytes,
      schema,
      schemaIsToday: schema === null ? null : schema === today,
      problem: s.problem ?? (schema !== null && schema !== today ? "its DDL is not sql/ddl/ today: a restore refuses it" : null),
    };
  });
}

/**
 * Removes a snapshot's files (complete or half-written). Refused while a world_snapshot or
 * world_restore run is queued or running (`activeRuns` names them): it may be reading or writing them.
 */
export async function removeSnapshot(config: StandConfig, name: string, activeRuns: () => Promise<string[]>): Promise<string> {
  const store = new SnapshotStore(config, standPaths(config));
  const folder = store.folder(name);
  let active: string[];
  try {
    active = await activeRuns();
  } catch (err) {
    throw new Error(`snapshot-rm: cannot ask the runner whether a snapshot run is active (${errorMessage(err)}); start it (make runner-start) and try again`, { cause: err });
  }
  if (active.length > 0) throw new Error(`snapshot-rm refused: ${active.join(", ")} is active and may be using the snapshots; wait for it to end`);
  if (!store.remove(name)) throw new Error(`snapshot-rm: no snapshot named '${name}' in ${store.dir} (make snapshots lists them)`);
  return folder;
}
