// world_restore — put a saved world back (make restore NAME=…; docs/world.md "Snapshots").
//   1 check_snapshot        refusals before anything is touched: a complete, whole snapshot of that
//                           name, of today's sql/ddl/ and this stand's layout, room on the disk
//   2 invalidate_position   world_position := -1 (the world is unusable until the restore ends)
//   3 replace_world         the loader stops; ZooKeeper, both ClickHouse nodes and Kafka stop; their
//                           files are replaced by the snapshot's; they start again
//   4 record_schema         the snapshot's DDL build and the live catalogue recorded as this run's
//   5 resume_ingest         the loader consumes again, from the group offsets the snapshot holds
//   6 set_position          world_position := the snapshot's; world.restores says which snapshot
// A restore cut short (runner killed, a service that does not come back) leaves -1: this DAG again
// with the same name, or make rebuild-storage, brings the world back.
import { loadStandConfig } from "../src/config/index.ts";
import { SnapshotStore, positionBeforeRun, recordRestore, checkSnapshotRestore, recordRestoredSchema, replaceWorldFiles, resumeIngest } from "../src/snapshots/index.ts";
import { standPaths } from "../src/services/index.ts";
import { withRunnerDb, WORLD_POSITION_KEY } from "../src/world/index.ts";
import { setWorldPosition, worldDag } from "./support/world-io.ts";
import { snapshotConf, snapshotInput } from "./world_snapshot.ts";

const MINUTE = 60_000;

function manifestOf(name: string) {
  const config = loadStandConfig();
  return new SnapshotStore(config, standPaths(config)).openForRestore(name);
}

export default worldDag("world_restore", "Put the world saved as conf.name back: both ClickHouse nodes, ZooKeeper, Kafka with its group offsets, world_position", snapshotConf, 10 * MINUTE)
  .task("check_snapshot", { executionTimeoutMs: MINUTE }, async (ctx) => {
    await checkSnapshotRestore(snapshotInput(ctx));
  })
  .task("invalidate_position", { upstream: ["check_snapshot"], executionTimeoutMs: MINUTE }, async (ctx) => {
    const before = await ctx.variables.get(WORLD_POSITION_KEY);
    ctx.log.info(`replacing the world at ${WORLD_POSITION_KEY} ${before ?? "unset"} by snapshot '${ctx.conf.name}'`);
    await setWorldPosition(ctx, -1);
  })
  .task("replace_world", { upstream: ["invalidate_position"] }, async (ctx) => {
    await replaceWorldFiles(snapshotInput(ctx));
  })
  .task("record_schema", { upstream: ["replace_world"], executionTimeoutMs: 2 * MINUTE }, async (ctx) => {
    await recordRestoredSchema(snapshotInput(ctx), manifestOf(ctx.conf.name));
  })
  .task("resume_ingest", { upstream: ["record_schema"] }, async (ctx) => {
    await resumeIngest(snapshotInput(ctx));
  })
  .task("set_position", { upstream: ["resume_ingest"], executionTimeoutMs: MINUTE }, async (ctx) => {
    const manifest = manifestOf(ctx.conf.name);
    await withRunnerDb(async (db) => {
      const fromPosition = await positionBeforeRun(db, WORLD_POSITION_KEY, ctx.runId);
      await recordRestore(db, { snapshot: manifest.name, snapshotTakenAt: manifest.takenAt, fromPosition, toPosition: manifest.position, dagId: ctx.dagId, runId: ctx.runId });
    }, "world-restore");
    await setWorldPosition(ctx, manifest.position);
    ctx.log.info(`world restored from snapshot '${manifest.name}' (taken ${manifest.takenAt}): ${WORLD_POSITION_KEY} = ${manifest.position}`);
  })
  .build();
