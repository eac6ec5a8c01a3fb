// The door of generator/src/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { DEFAULT_BATCH_BYTES, DEFAULT_BATCH_SIZE, DEFAULT_IN_FLIGHT } from "./config.ts";
export { generateChunks } from "./day-chunks.ts";
export { DayRenderer, MAX_HIT_BYTES, World, generateDay } from "./day.ts";
export type { DayHits } from "./day.ts";
export type { FrameChunk } from "./frames.ts";
export { classifyHit } from "./invalid.ts";
export type { Passport } from "./inventory.ts";
export { silentLogger } from "./log.ts";
export { runBatch } from "./play.ts";
export { KafkaSink } from "./sink.ts";
export { DEFAULT_SEED, WORLD_SIZE_NAMES, WORLD_STARTING_DAYS, inventoryPath } from "./world.ts";
export type { WorldSize } from "./world.ts";
