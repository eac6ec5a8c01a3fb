// world_snapshot — save the whole world under a name (make snapshot NAME=…; docs/world.md "Snapshots").
//   1 check_snapshot   refusals before anything stops: the name free, a ready world, its DDL that of
//                      sql/ddl/ today, room on the disk
//   2 save_snapshot    the loader drains, commits and leaves its groups; ZooKeeper, both ClickHouse
//                      nodes and Kafka stop; their files are linked or copied into the snapshot; they
//                      start again and the loader consumes again (whatever happened in between)
// Holds the world resource like every world DAG: no step, rebuild, restore or live day runs meanwhile.
// world_position does not change.
import { z } from "zod";
import { NonRetryableError, type TaskContext } from "../src/runner/index.ts";
import { SNAPSHOT_NAME, checkSnapshotSave, saveSnapshot } from "../src/snapshots/index.ts";
import { WORLD_SERVICES } from "../src/stand/index.ts";
import { describePosition } from "../src/world/index.ts";
import { passport, readWorldPosition, taskIo, worldDag } from "./support/world-io.ts";

const MINUTE = 60_000;

export const snapshotConf = z.object({ name: z.string().regex(SNAPSHOT_NAME, "1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit") }).strict();
type SnapshotConf = z.infer<typeof snapshotConf>;

export function snapshotInput(ctx: TaskContext<SnapshotConf>) {
  return { ...taskIo(ctx), name: ctx.conf.name, dagId: ctx.dagId, runId: ctx.runId, taskId: ctx.taskId, worldServices: WORLD_SERVICES };
}

async function readyPosition(ctx: TaskContext<SnapshotConf>): Promise<number> {
  const reading = await readWorldPosition(ctx);
  if (reading.kind !== "number") throw new NonRetryableError(`world_snapshot refused: ${describePosition(reading)}; run make up first`);
  return reading.value;
}

export default worldDag("world_snapshot", "Save the whole world under conf.name: both ClickHouse nodes, ZooKeeper, Kafka with its group offsets, world_position", snapshotConf, 10 * MINUTE)
  .task("check_snapshot", { executionTimeoutMs: MINUTE }, async (ctx) => {
    const { WORLD_STARTING_DAYS } = await passport();
    await checkSnapshotSave({ ...snapshotInput(ctx), position: await readyPosition(ctx), startingDays: WORLD_STARTING_DAYS });
  })
  .task("save_snapshot", { upstream: ["check_snapshot"] }, async (ctx) => {
    await saveSnapshot({ ...snapshotInput(ctx), position: await readyPosition(ctx) });
  })
  .build();
