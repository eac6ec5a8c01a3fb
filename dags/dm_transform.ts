// dm_transform — build the marts as etl: funnel and revenue for the days DM is behind DDS
// (sql/etl/01-dm-dates-to-process.sql); traffic, DQ errors and purchase_vs_orders whole each run.
import { z } from "zod";
import { defineDag } from "../src/runner/index.ts";
import { runDmTransform } from "../tasks/index.ts";
import { taskIo, WORLD_DAG, worldFailurePolicy } from "./support/world-io.ts";

export default defineDag({
  id: "dm_transform",
  description: "Build the DM marts for the days DM is behind DDS",
  ...WORLD_DAG,
  params: z.object({}).strict(),
  ...worldFailurePolicy(20 * 60_000),
  fileloc: "dags/dm_transform.ts",
})
  .task("build_dm", async (ctx) => {
    const report = await runDmTransform({ ...taskIo(ctx), loadId: ctx.runId });
    ctx.log.info(`dm built for [${report.dates.join(", ")}]: ${report.files.length} files, version ${report.version}`);
  })
  .build();
