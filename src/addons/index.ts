// The door of src/addons/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { fetchedToolsVersion, fieldToolPaths, writeFieldTools } from "./field-tools.ts";
export { prometheusService, renderRules } from "./prometheus.ts";
export { supersetService } from "./superset.ts";
