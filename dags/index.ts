// Every DAG the runner loads. A DAG module lives in dags/ and default-exports a built Dag;
// list it here (the registry rejects duplicate ids and waiting triggers naming unknown DAGs).
import type { Dag } from "../src/runner/index.ts";
import ddsTransform from "./dds_transform.ts";
import dmTransform from "./dm_transform.ts";
import dqCheck from "./dq_check.ts";
import etlPipeline from "./etl_pipeline.ts";
import exampleHello from "./example_hello.ts";
import ordersIngest from "./orders_ingest.ts";
import worldInitialize from "./world_initialize.ts";
import worldLive from "./world_live.ts";
import worldLiveDay from "./world_live_day.ts";
import worldNextDay from "./world_next_day.ts";
import worldRecreate from "./world_recreate.ts";
import worldRestore from "./world_restore.ts";
import worldSnapshot from "./world_snapshot.ts";

/** The DAGs that own the world (SPEC): every one but world_live is manual and unpaused; all run one at a time. */
export const worldDags: readonly Dag[] = [
  worldInitialize,
  worldRecreate,
  worldNextDay,
  worldLiveDay,
  worldLive,
  ordersIngest,
  etlPipeline,
  ddsTransform,
  dmTransform,
  dqCheck,
  worldSnapshot,
  worldRestore,
];

export const dags: readonly Dag[] = [exampleHello, ...worldDags];
