// The door of src/snapshots/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { removeSnapshot, snapshotRows } from "./listing.ts";
export { positionBeforeRun, readRestores, recordRestore } from "./restores.ts";
export type { SnapshotSummary } from "./restores.ts";
export { SNAPSHOT_NAME, SnapshotStore, mib, snapshotDisk } from "./store.ts";
export { checkSnapshotRestore, checkSnapshotSave, recordRestoredSchema, replaceWorldFiles, resumeIngest, saveSnapshot } from "./world-snapshot.ts";
