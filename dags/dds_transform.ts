// dds_transform — build dds.order, dds.session, dds.identity for the days the data says are due
// (sql/etl/00-dds-dates-to-process.sql), as etl. Every row carries this run's id as _load_id.
import { runDdsTransform } from "../tasks/index.ts";
import { NO_PARAMS, taskIo, worldDag } from "./support/world-io.ts";

export default worldDag("dds_transform", "Build the DDS layer (orders, sessions, identities) for the days that are due", NO_PARAMS, 20 * 60_000)
  .task("build_dds", async (ctx) => {
    const report = await runDdsTransform({ ...taskIo(ctx), loadId: ctx.runId });
    ctx.log.info(`dds built for [${report.dates.join(", ")}]: ${report.files.length} files, version ${report.version}`);
  })
  .build();
