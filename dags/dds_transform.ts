// dds_transform — build dds.order, dds.session, dds.identity for the days the data says are due
// (sql/etl/00-dds-dates-to-process.sql), as etl. Every row carries this run's id as _load_id.
import { z } from "zod";
import { defineDag } from "../src/runner/index.ts";
import { runDdsTransform } from "../tasks/index.ts";
import { taskIo, WORLD_DAG, worldFailurePolicy } from "./support/world-io.ts";

export default defineDag({
  id: "dds_transform",
  description: "Build the DDS layer (orders, sessions, identities) for the days that are due",
  ...WORLD_DAG,
  params: z.object({}).strict(),
  ...worldFailurePolicy(20 * 60_000),
  fileloc: "dags/dds_transform.ts",
})
  .task("build_dds", async (ctx) => {
    const report = await runDdsTransform({ ...taskIo(ctx), loadId: ctx.runId });
    ctx.log.info(`dds built for [${report.dates.join(", ")}]: ${report.files.length} files, version ${report.version}`);
  })
  .build();
