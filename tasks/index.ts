// The door of tasks/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { deleteConsumerGroups } from "./consumer-groups.ts";
export { dropApplicationDatabases } from "./databases.ts";
export { applyDdlFile, listDdlFiles } from "./ddl.ts";
export { multiplexedFrame } from "./docker-streams.ts";
export { DQ_CHECKS, assertCheckPassed, measureDataQuality, readCheckResults } from "./dq.ts";
export { runDdsTransform, runDmTransform } from "./etl.ts";
export { buildGenerator } from "./generator-build.ts";
export type { GeneratorBuild, GeneratorMode } from "./generator-build.ts";
export { runGenerator } from "./generator-run.ts";
export type { GeneratorRun } from "./generator-run.ts";
export { playedDay, waitForHitsConsumed } from "./hits-consumed.ts";
export { withKafkaAdmin } from "./kafka-admin.ts";
export { parseOrdersBatch, pullOrdersBatch } from "./orders.ts";
export { clearCreationResidue } from "./residue.ts";
export { createTopics, deleteTopics } from "./topics.ts";
export { readOdsCounts, waitForOds } from "./wait-for-ods.ts";
export type { OdsCounts } from "./wait-for-ods.ts";
