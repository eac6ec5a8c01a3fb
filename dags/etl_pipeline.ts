// etl_pipeline — build DDS, then DM. Each layer is its own DAG, waited for by a waiting trigger,
// so a failed layer fails the pipeline (and whatever triggered it). Rerun it by hand after a fix:
// each layer derives the days to build from the data.
import { z } from "zod";
import { defineDag } from "../src/runner/dag.ts";

export default defineDag({
  id: "etl_pipeline",
  description: "Build the DDS layer (dds_transform), then the DM layer (dm_transform); a failed layer fails the pipeline",
  schedule: null,
  // every world DAG holds the world for its whole run; its children run inside that hold
  exclusive: ["world"],
  isPausedUponCreation: false,
  maxActiveRuns: 1,
  params: z.object({}).strict(),
  fileloc: "dags/etl_pipeline.ts",
})
  .waitingTrigger("dds_transform", { triggerDagId: "dds_transform" })
  .waitingTrigger("dm_transform", { upstream: ["dds_transform"], triggerDagId: "dm_transform" })
  .build();
