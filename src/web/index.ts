// The door of src/web/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { kafkaOffsetsReader } from "./kafka-lag.ts";
export { readMetricsHistory } from "./metrics-history.ts";
export { sharedWorldSources } from "./pages/world-view.ts";
export type { ServiceView, SnapshotsView } from "./pages/world-view.ts";
export { createWebRouter } from "./router.ts";
export { worldApiRoutes } from "./world-api.ts";
export { readWorldNumbers } from "./world-summary.ts";
