// world_live_day — play the next day of the world paced in model time (generator `live`), as the
// world_live switch does every 25 minutes. Guarded like world_next_day; with P the position read:
//   1 read_position          the guard
//   2 build_generator        the canonical generator build
//   3 play_live_day          one live run of day P at conf.speed (60: a model day in 24 minutes)
//   4 wait_for_hits          the loader placed every message (its committed offsets), and ods.event FINAL
//                            holds exactly the valid hits the generator played for the day
//   5 send_order_snapshot    snapshot P-1
//   6 orders_ingest          waiting trigger
//   7 set_position           world_position := P+1
//   8 etl_pipeline           waiting trigger
import { z } from "zod";
import { buildWorldGenerator, runWorldGenerator } from "./support/generator.ts";
import { playedDay, waitForHitsConsumed } from "../tasks/index.ts";
import { pinnedPosition, pinPosition } from "./support/step-position.ts";
import { passport, requester, setWorldPosition, taskIo, worldDag } from "./support/world-io.ts";

const MINUTE = 60_000;

export const liveParams = z.object({ speed: z.number().min(30).max(1_000_000).default(60) }).strict();

export default worldDag("world_live_day", "Play the next day of the world live (paced, conf.speed × model time), ingest it and its order snapshot, advance the position, run the ETL", liveParams, 15 * MINUTE)
  .task("read_position", { executionTimeoutMs: MINUTE }, async (ctx) => {
    const { position } = await pinPosition(ctx);
    ctx.log.info(`world_position is ${position}: playing day ${position} live at ×${ctx.conf.speed}`);
  })
  .task("build_generator", { upstream: ["read_position"], retries: 1 }, async (ctx) => {
    await buildWorldGenerator(ctx);
  })
  // a model day takes 24 h / speed: 24 minutes at the default 60, so the timeout is an hour
  .task("play_live_day", { upstream: ["build_generator"], executionTimeoutMs: 60 * MINUTE }, async (ctx) => {
    const { position } = await pinnedPosition(ctx);
    await runWorldGenerator(ctx, ["live", "--day", String(position), "--speed", String(ctx.conf.speed)]);
  })
  .task("wait_for_hits", { upstream: ["play_live_day"] }, async (ctx) => {
    const { position } = await pinnedPosition(ctx);
    const { seed, size } = await passport();
    await waitForHitsConsumed(taskIo(ctx), [playedDay(seed, position, size)], 12 * MINUTE, requester(ctx));
  })
  .task("send_order_snapshot", { upstream: ["wait_for_hits"] }, async (ctx) => {
    const { position } = await pinnedPosition(ctx);
    await runWorldGenerator(ctx, ["snapshot", "--day", String(position - 1), "--days", "1"]);
  })
  .waitingTrigger("orders_ingest", { upstream: ["send_order_snapshot"], triggerDagId: "orders_ingest" })
  .task("set_position", { upstream: ["orders_ingest"], executionTimeoutMs: MINUTE }, async (ctx) => {
    const { position } = await pinnedPosition(ctx, (pinned) => pinned + 1);
    await setWorldPosition(ctx, position + 1);
  })
  .waitingTrigger("etl_pipeline", { upstream: ["set_position"], triggerDagId: "etl_pipeline" })
  .build();
