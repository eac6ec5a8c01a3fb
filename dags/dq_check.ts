// dq_check — the world's data-quality checks, run last by etl_pipeline and alone by `make dq`:
// 1. measure — every check (sql/dq/checks/) measured into dm.dq_summary under this run, then the
//    run's results published day by day (sql/dq/publish.sql), red or green: a red check must be
//    visible before its task fails.
// 2. check_<name> — one task per check: logs its results per data date and fails when any day has
//    failed rows, logging up to 20 offending keys (tasks/dq.ts DQ_CHECKS names them).
import { DQ_CHECKS, assertCheckPassed, measureDataQuality, readCheckResults } from "../tasks/index.ts";
import { NO_PARAMS, passport, readWorldPosition, taskIo, worldDag } from "./support/world-io.ts";

const dag = worldDag("dq_check", "Check the world's data: sessions vs the generator's visits, order classes vs the passport, every mart vs DDS, freshness", NO_PARAMS, 20 * 60_000).task("measure", async (ctx) => {
  const report = await measureDataQuality({
    ...taskIo(ctx),
    loadId: ctx.runId,
    position: await readWorldPosition(ctx),
    passport: await passport(),
  });
  const red = report.checks.filter((c) => c.failedRows > 0).map((c) => c.check);
  ctx.log.info(`dq results published (version ${report.version}): ${red.length === 0 ? "every check passes" : `red: ${red.join(", ")}`}`);
});

for (const check of DQ_CHECKS) {
  dag.task(`check_${check}`, { upstream: ["measure"], retries: 0 }, async (ctx) => {
    const results = await readCheckResults({ ...taskIo(ctx), loadId: ctx.runId, check });
    assertCheckPassed(check, results, (line) => ctx.log.info(line));
  });
}

export default dag.build();
