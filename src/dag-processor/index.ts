// The door of src/dag-processor/: Airflow's DAG processor (discovery, isolated parse, versions).
export { BUNDLE_DIR } from "./bundle.ts";
export { DagProcessor } from "./processor.ts";
export type { DagFolder, DagProcessorOptions } from "./processor.ts";
