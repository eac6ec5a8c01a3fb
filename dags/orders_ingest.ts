// orders_ingest — take the order snapshots sent to topic `orders` into ODS. No guard: world
// initialisation calls it before a world exists (SPEC). Two tasks, both safe to retry:
//   1 pull_batch   wait until the loader placed every snapshot sent (its committed offsets), then
//                  claim the landed, unclaimed ones in stg.orders_raw under this run's id
//   2 parse_batch  that load into ods.order / ods.order_errors
import { parseOrdersBatch, pullOrdersBatch } from "../tasks/index.ts";
import { NO_PARAMS, requester, taskIo, worldDag } from "./support/world-io.ts";

export default worldDag("orders_ingest", "Pull the order snapshots from Kafka into stg.orders_raw and parse them into ods.order / ods.order_errors", NO_PARAMS, 10 * 60_000)
  .task("pull_batch", {}, async (ctx) => {
    await pullOrdersBatch({ ...taskIo(ctx), loadId: ctx.runId, requestedBy: requester(ctx) });
  })
  .task("parse_batch", { upstream: ["pull_batch"], retries: 1, retryDelayMs: 5000 }, async (ctx) => {
    await parseOrdersBatch({ ...taskIo(ctx), loadId: ctx.runId });
  })
  .build();
