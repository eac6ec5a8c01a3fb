// orders_ingest — take the order snapshots waiting in topic `orders` into ODS. No guard: world
// initialisation calls it before a world exists (SPEC). Two tasks, so a failed parse is rerun on
// the landed rows without reading Kafka again:
//   1 pull_batch   one batch from the orders reader into stg.orders_raw under this run's id
//   2 parse_batch  that load into ods.order / ods.order_errors
import { z } from "zod";
import { defineDag } from "../src/runner/dag.ts";
import { parseOrdersBatch, pullOrdersBatch } from "../tasks/orders.ts";
import { RUNS_ONCE, taskIo, WORLD_FAILURE_POLICY } from "./support/world-io.ts";

export default defineDag({
  id: "orders_ingest",
  description: "Pull the order snapshots from Kafka into stg.orders_raw and parse them into ods.order / ods.order_errors",
  schedule: null,
  // every world DAG holds the world for its whole run; its children run inside that hold
  exclusive: ["world"],
  isPausedUponCreation: false,
  maxActiveRuns: 1,
  params: z.object({}).strict(),
  isRetryable: WORLD_FAILURE_POLICY.isRetryable,
  defaults: { ...WORLD_FAILURE_POLICY.retries, executionTimeoutMs: 10 * 60_000 },
  fileloc: "dags/orders_ingest.ts",
})
  .task("pull_batch", { ...RUNS_ONCE }, async (ctx) => {
    await pullOrdersBatch({ ...taskIo(ctx), loadId: ctx.runId });
  })
  .task("parse_batch", { upstream: ["pull_batch"], retries: 1, retryDelayMs: 5000 }, async (ctx) => {
    await parseOrdersBatch({ ...taskIo(ctx), loadId: ctx.runId });
  })
  .build();
