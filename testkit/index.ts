// The door of testkit/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { RUNNER_SCHEMA_FILE, dumpRunnerSchema } from "./runner/runner-schema.ts";
export { shiftedStandConfigText } from "./stand/shifted-stand.ts";
export { takeWorldLock } from "./stand/world-lock.ts";
export { setTestIngest } from "./world/ingest.ts";
export { api, describeRun, emptyWorld, readPositionText, runDag, taskInstances, triggerRun, useRunnerService, withClickHouse } from "./world/rest-world.ts";
export type { FinishedRun } from "./world/rest-world.ts";
export { dagFile, startFolderMember, stopFolderMember, until } from "./runner/dag-folder.ts";
export { createMigratedTestDatabase } from "./runner/runner-db.ts";
