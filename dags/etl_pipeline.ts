// etl_pipeline — build DDS, then DM, then check the data (dq_check). Each is its own DAG, waited
// for by a waiting trigger, so a failed layer or a red check fails the pipeline (and whatever
// triggered it). Rerun it by hand after a fix: each layer derives the days to build from the data.
import { NO_PARAMS, worldDag } from "./support/world-io.ts";

export default worldDag("etl_pipeline", "Build the DDS layer (dds_transform), then the DM layer (dm_transform), then check the data (dq_check); a failed layer or check fails the pipeline", NO_PARAMS)
  .waitingTrigger("dds_transform", { triggerDagId: "dds_transform" })
  .waitingTrigger("dm_transform", { upstream: ["dds_transform"], triggerDagId: "dm_transform" })
  .waitingTrigger("dq_check", { upstream: ["dm_transform"], triggerDagId: "dq_check" })
  .build();
