// The door of src/loader/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { jsonEachRowChunks } from "./clickhouse-sink.ts";
export type { RowInserter } from "./clickhouse-sink.ts";
export { controlPool, describeLoaders, ensureConsuming, readLoaderStatuses, setIngest } from "./control.ts";
export type { IngestDesire } from "./control.ts";
export { ClickHouseDeadLetterSink, deadLetterTableDdl } from "./dead-letters.ts";
export type { DecodeMode } from "./decode.ts";
export { groupProgress, topicEndOffsets } from "./group-progress.ts";
export type { GroupProgress, OffsetsByPartition } from "./group-progress.ts";
export { LoaderCore } from "./loader-core.ts";
export { LoaderMetrics } from "./metrics.ts";
export { LOADER_MIGRATIONS } from "./migrate.ts";
export type { SpliceRouter } from "./splice.ts";
export { LOADER_CONSUMER_SETTINGS, createTopicLoader, hitsRouter, loaderInsertSettings, nodeInserters } from "./world-loader.ts";
