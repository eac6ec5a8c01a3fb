// dm_transform — build the marts as etl: funnel and revenue for the days DM is behind DDS
// (sql/etl/01-dm-dates-to-process.sql); traffic, DQ errors and purchase_vs_orders whole each run.
import { runDmTransform } from "../tasks/index.ts";
import { NO_PARAMS, taskIo, worldDag } from "./support/world-io.ts";

export default worldDag("dm_transform", "Build the DM marts for the days DM is behind DDS", NO_PARAMS, 20 * 60_000)
  .task("build_dm", async (ctx) => {
    const report = await runDmTransform({ ...taskIo(ctx), loadId: ctx.runId });
    ctx.log.info(`dm built for [${report.dates.join(", ")}]: ${report.files.length} files, version ${report.version}`);
  })
  .build();
