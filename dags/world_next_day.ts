// world_next_day — play the next `days` days (1 … 7) of the world as fast as possible.
// Guarded: red unless world_position >= WORLD_STARTING_DAYS. With P the position read:
//   1 read_position          the guard; logs the days to play (P … P+days-1)
//   2 build_generator        the canonical generator build
//   3 play_days              one batch run: days P … P+days-1
//   4 wait_for_hits          the loader placed every message (its committed offsets), and ods.event FINAL
//                            holds exactly the valid hits the generator played for each new date
//   5 send_order_snapshots   snapshots P-1 … P+days-2 (the run that plays day D sends snapshot D-1)
//   6 orders_ingest          waiting trigger
//   7 set_position           world_position := P+days (set, never incremented)
//   8 etl_pipeline           waiting trigger
// Step DAGs hold the world resource, so they run one at a time; P is read once (read_position pins
// it in world_position_pin) and every later task fails if world_position moved under the run.
import { z } from "zod";
import { buildWorldGenerator, runWorldGenerator } from "./support/generator.ts";
import { playedDay, waitForHitsConsumed } from "../tasks/index.ts";
import { pinnedPosition, pinPosition } from "./support/step-position.ts";
import { passport, requester, setWorldPosition, taskIo, worldDag } from "./support/world-io.ts";

const MINUTE = 60_000;

export default worldDag("world_next_day", "Play the next days of the world (conf.days, 1 … 7) in batch, ingest them and their order snapshots, advance the position, run the ETL", z.object({ days: z.number().int().min(1).max(7).default(1) }).strict(), 15 * MINUTE)
  .task("read_position", { executionTimeoutMs: MINUTE }, async (ctx) => {
    const { position } = await pinPosition(ctx);
    ctx.log.info(`world_position is ${position}: playing days ${position} … ${position + ctx.conf.days - 1}`);
  })
  .task("build_generator", { upstream: ["read_position"], retries: 1 }, async (ctx) => {
    await buildWorldGenerator(ctx);
  })
  .task("play_days", { upstream: ["build_generator"] }, async (ctx) => {
    const { position } = await pinnedPosition(ctx);
    await runWorldGenerator(ctx, ["batch", "--day", String(position), "--days", String(ctx.conf.days)]);
  })
  .task("wait_for_hits", { upstream: ["play_days"] }, async (ctx) => {
    const { position } = await pinnedPosition(ctx);
    const { seed, size } = await passport();
    const days = Array.from({ length: ctx.conf.days }, (_, i) => playedDay(seed, position + i, size));
    await waitForHitsConsumed(taskIo(ctx), days, 12 * MINUTE, requester(ctx));
  })
  .task("send_order_snapshots", { upstream: ["wait_for_hits"] }, async (ctx) => {
    const { position } = await pinnedPosition(ctx);
    await runWorldGenerator(ctx, ["snapshot", "--day", String(position - 1), "--days", String(ctx.conf.days)]);
  })
  .waitingTrigger("orders_ingest", { upstream: ["send_order_snapshots"], triggerDagId: "orders_ingest" })
  .task("set_position", { upstream: ["orders_ingest"], executionTimeoutMs: MINUTE }, async (ctx) => {
    const { position } = await pinnedPosition(ctx, (pinned) => pinned + ctx.conf.days);
    await setWorldPosition(ctx, position + ctx.conf.days);
  })
  .waitingTrigger("etl_pipeline", { upstream: ["set_position"], triggerDagId: "etl_pipeline" })
  .build();
