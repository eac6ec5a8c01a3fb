// The door of src/world-ops/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { loadExpectations, runClickHouseChecks } from "./checks.ts";
export { FOLDING_ENGINE, diffSnapshots, listWorldTables, takeWorldSnapshot } from "./guard.ts";
export type { WorldSnapshot } from "./guard.ts";
export { layerCounts } from "./report.ts";
