// world_recreate — destroy the world and create it again (make rebuild-storage).
// The seed's contract, one task per step; creation is delegated, not repeated here:
//   1 invalidate_position     world_position := -1 (the old world is invalid before anything happens to it)
//     stop_ingest             the loader flushes what it read, commits, and leaves its groups
//   2 drop_databases          stg dm dds ods dic
//   3 delete_consumer_groups  clickstream_hits, clickstream_orders (a live consumer holds its group: refused)
//     delete_topics           hits, orders
//   4 reset_position          world_position := 0, only after a clean cleanup
//   5 world_initialize        waiting trigger; its result is this run's result
// A failure in 2-3 leaves -1, and world_initialize (make up) then refuses until this DAG succeeds.
import { setIngest } from "../src/loader/index.ts";
import { dropApplicationDatabases, deleteConsumerGroups, deleteTopics } from "../tasks/index.ts";
import { NO_PARAMS, requester, setWorldPosition, taskIo, worldDag } from "./support/world-io.ts";

const MINUTE = 60_000;

export default worldDag("world_recreate", "Destroy the world (position -1, databases, consumer groups, topics, position 0) and create it again through world_initialize", NO_PARAMS, 10 * MINUTE)
  .task("invalidate_position", { executionTimeoutMs: MINUTE }, (ctx) => setWorldPosition(ctx, -1))
  .task("stop_ingest", { upstream: ["invalidate_position"] }, async (ctx) => {
    await setIngest({ ...taskIo(ctx), desired: "stopped", requestedBy: requester(ctx), timeoutMs: 2 * MINUTE });
  })
  .task("drop_databases", { upstream: ["stop_ingest"] }, (ctx) => dropApplicationDatabases(taskIo(ctx)))
  .task("delete_consumer_groups", { upstream: ["drop_databases"] }, (ctx) => deleteConsumerGroups(taskIo(ctx)))
  .task("delete_topics", { upstream: ["delete_consumer_groups"], retries: 1, retryDelayMs: 2000 }, (ctx) => deleteTopics(taskIo(ctx)))
  .task("reset_position", { upstream: ["delete_topics"], executionTimeoutMs: MINUTE }, (ctx) => setWorldPosition(ctx, 0))
  .waitingTrigger("world_initialize", { upstream: ["reset_position"], triggerDagId: "world_initialize" })
  .build();
