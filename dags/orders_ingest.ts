// orders_ingest — take the order snapshots waiting in topic `orders` into ODS. No guard: world
// initialisation calls it before a world exists (SPEC). Two tasks, so a failed parse is rerun on
// the landed rows without reading Kafka again:
//   1 pull_batch   one batch from the orders reader into stg.orders_raw under this run's id
//   2 parse_batch  that load into ods.order / ods.order_errors
import { z } from "zod";
import { defineDag } from "../src/runner/dag.ts";
import { parseOrdersBatch, pullOrdersBatch } from "../tasks/orders.ts";
import { RUNS_ONCE, taskIo, WORLD_DAG, worldFailurePolicy } from "./support/world-io.ts";

export default defineDag({
  id: "orders_ingest",
  description: "Pull the order snapshots from Kafka into stg.orders_raw and parse them into ods.order / ods.order_errors",
  ...WORLD_DAG,
  params: z.object({}).strict(),
  ...worldFailurePolicy(10 * 60_000),
  fileloc: "dags/orders_ingest.ts",
})
  .task("pull_batch", { ...RUNS_ONCE }, async (ctx) => {
    await pullOrdersBatch({ ...taskIo(ctx), loadId: ctx.runId });
  })
  .task("parse_batch", { upstream: ["pull_batch"], retries: 1, retryDelayMs: 5000 }, async (ctx) => {
    await parseOrdersBatch({ ...taskIo(ctx), loadId: ctx.runId });
  })
  .build();
