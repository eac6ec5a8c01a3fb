// world_initialize — create the world if there is none; change nothing on a ready one.
// The seed's contract, one task per step (SPEC "DAG contracts"):
//   1 read_position       decide: create, end green with no change (world exists and its recorded
//                         catalogue is on every node; the loader is asked to consume if it does
//                         not), or refuse (a ready position whose world is gone too)
//     clear_residue       what a creation that did not finish left (databases, groups, topics) is
//                         cleared first, the loader stopped before, so a retried creation starts
//                         from nothing (seed: "next make up retries from the same place with the same result")
//   2 create_topics       hits (2 partitions), orders (1) — before the DDL
//   3 ddl_<file>          one task per sql/ddl file, in name order, as lifecycle from node 1;
//                         each applied file is recorded in the schema ledger
//     record_catalogue    every column of the world's tables on every node, as built (schema status
//                         and a later read_position compare the live servers with it)
//     start_ingest        the loader service consumes hits and orders (groups clickstream_hits,
//                         clickstream_orders): only now, since stg.hits_in keeps nothing and every
//                         view must exist before the first hit lands (sql/ddl/90-hits-ingest.sql)
//   4 build_generator     the canonical generator build
//   5 play_starting_days  one batch run: days 0 … WORLD_STARTING_DAYS-1
//   6 wait_for_ods        the loader committed the end of topic hits, then ODS rows for the passport
//                         dates + error rows >= the passport's events
//   7 send_order_snapshots  second generator run, snapshots of days 0 … 6
//   8 orders_ingest       waiting trigger; continue only on its success
//   9 set_position        world_position := WORLD_STARTING_DAYS
//  10 etl_pipeline        waiting trigger (dds_transform, then dm_transform)
import { type TaskContext, NonRetryableError } from "../src/runner/index.ts";
import { recordAppliedDdl, describePosition, initializeDecision, checkWorldCatalogue, recordWorldCatalogue } from "../src/world/index.ts";
import { clearCreationResidue, applyDdlFile, listDdlFiles, createTopics, waitForOds } from "../tasks/index.ts";
import { ensureConsuming, setIngest } from "../src/loader/index.ts";
import { buildWorldGenerator, runWorldGenerator } from "./support/generator.ts";
import { NO_PARAMS, passport, readWorldPosition, requester, setWorldPosition, taskIo, worldDag } from "./support/world-io.ts";

export const DAG_ID = "world_initialize";

/** Task ids come from the DDL file names, read once when the DAG loads (a new file needs a runner restart). */
export const DDL_FILES: readonly string[] = await listDdlFiles();
export function ddlTaskId(file: string): string {
  return `ddl_${file.replace(/\.sql$/, "")}`;
}

const MINUTE = 60_000;

async function decide(ctx: TaskContext<unknown>) {
  const reading = await readWorldPosition(ctx);
  const { WORLD_STARTING_DAYS } = await passport();
  const decision = initializeDecision(reading, WORLD_STARTING_DAYS);
  if (decision.action === "refuse") throw new NonRetryableError(decision.message);
  if (decision.action === "exists") {
    // the position is the world's only state: look at the servers before saying the world is there
    const gone = await checkWorldCatalogue(taskIo(ctx));
    if (gone !== undefined) {
      throw new NonRetryableError(
        `${describePosition(reading)}, but the world it describes is gone: ${gone}. ` +
          "make up does not build over a half-gone world; run make rebuild-storage",
      );
    }
    // a world made before the loader, or a loader stopped by hand, would not take the next step's hits
    await ensureConsuming({ ...taskIo(ctx), requestedBy: requester(ctx) });
    ctx.log.info(`world exists at position ${decision.position}; nothing to do`);
    return { shortCircuit: true } as const;
  }
  ctx.log.info(`${describePosition(reading)}: creating the world (WORLD_STARTING_DAYS ${WORLD_STARTING_DAYS})`);
  return undefined;
}

async function applyAndRecord(ctx: TaskContext<unknown>, file: string): Promise<void> {
  const applied = await applyDdlFile({ ...taskIo(ctx), file });
  await recordAppliedDdl({
    file: applied.file,
    checksum: applied.checksum,
    statements: applied.statements,
    dagId: ctx.dagId,
    runId: ctx.runId,
    taskId: ctx.taskId,
    serverVersion: applied.platformVersion,
  });
  ctx.log.info(`${applied.file}: ${applied.statements} statements applied; ledger: sha256 ${applied.checksum}`);
}

const dag = worldDag(DAG_ID, "Create the world if there is none (topics, DDL, starting days, orders, position, ETL); changes nothing on a ready one", NO_PARAMS, 10 * MINUTE)
  .task("read_position", { executionTimeoutMs: MINUTE }, decide)
  .task("clear_residue", { upstream: ["read_position"] }, async (ctx) => {
    await clearCreationResidue(taskIo(ctx), requester(ctx));
  })
  .task("create_topics", { upstream: ["clear_residue"], retries: 2, retryDelayMs: 2000 }, (ctx) => createTopics(taskIo(ctx)));

let previous = "create_topics";
for (const file of DDL_FILES) {
  dag.task(ddlTaskId(file), { upstream: [previous], description: `apply sql/ddl/${file}` }, (ctx) => applyAndRecord(ctx, file));
  previous = ddlTaskId(file);
}

export default dag
  .task("record_catalogue", { upstream: [previous], retries: 2, retryDelayMs: 2000 }, async (ctx) => {
    await recordWorldCatalogue({ ...taskIo(ctx), runId: ctx.runId });
  })
  .task("start_ingest", { upstream: ["record_catalogue"] }, async (ctx) => {
    await setIngest({ ...taskIo(ctx), desired: "consuming", requestedBy: requester(ctx), timeoutMs: 2 * MINUTE });
  })
  .task("build_generator", { upstream: ["start_ingest"], retries: 1 }, async (ctx) => {
    const build = await buildWorldGenerator(ctx);
    ctx.log.info(`generator build ${build.hash.slice(0, 12)} (${build.mode}${build.reused ? ", reused" : ""})`);
  })
  .task("play_starting_days", { upstream: ["build_generator"] }, async (ctx) => {
    const { WORLD_STARTING_DAYS } = await passport();
    await runWorldGenerator(ctx, ["batch", "--day", "0", "--days", String(WORLD_STARTING_DAYS)]);
  })
  .task("wait_for_ods", { upstream: ["play_starting_days"] }, async (ctx) => {
    await waitForOds({ ...taskIo(ctx), passport: await passport(), timeoutMs: 8 * MINUTE });
  })
  .task("send_order_snapshots", { upstream: ["wait_for_ods"] }, async (ctx) => {
    const { snapshots } = await passport();
    await runWorldGenerator(ctx, ["snapshot", "--day", "0", "--days", String(snapshots.length)]);
  })
  .waitingTrigger("orders_ingest", { upstream: ["send_order_snapshots"], triggerDagId: "orders_ingest" })
  .task("set_position", { upstream: ["orders_ingest"], executionTimeoutMs: MINUTE }, async (ctx) => {
    await setWorldPosition(ctx, (await passport()).WORLD_STARTING_DAYS);
  })
  .waitingTrigger("etl_pipeline", { upstream: ["set_position"], triggerDagId: "etl_pipeline" })
  .build();
