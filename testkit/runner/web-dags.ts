// Small DAGs for the web view's browser tests: typed params (for the conf editor), a log line and a
// variable carrying the run's label (XSS probes travel through both), a task that fails once then
// succeeds (two tries to choose between), and a waiting trigger with its child DAG.
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { defineDag } from "../../src/runner/index.ts";

export const LABEL_VARIABLE = "web_last_label";

export const webOk = defineDag({
  id: "web_ok",
  description: "two tasks in a row <i>not italic</i>",
  params: z
    .object({
      days: z.number().int().min(0).optional(),
      label: z.string().optional(),
      /** How long extract takes, so a test can watch the run while it is running. */
      napMs: z.number().int().min(0).max(10_000).optional(),
    })
    .strict(),
})
  .task("extract", async (ctx) => {
    ctx.log.info(`label=${ctx.conf.label ?? "none"} days=${ctx.conf.days ?? "unset"}`);
    await sleep(ctx.conf.napMs ?? 400, undefined, { signal: ctx.signal });
  })
  .task("load", { upstream: ["extract"] }, async (ctx) => {
    if (ctx.conf.label !== undefined) await ctx.variables.set(LABEL_VARIABLE, ctx.conf.label);
    ctx.log.info("loaded");
    await sleep(200, undefined, { signal: ctx.signal });
  })
  .build();

export const webFlaky = defineDag({ id: "web_flaky", description: "fails once, then succeeds" })
  .task("wobble", { retries: 1, retryDelayMs: 50 }, (ctx) => {
    ctx.log.info(`wobble try ${ctx.tryNumber}`);
    if (ctx.tryNumber === 1) throw new Error("first try always fails");
  })
  .build();

export const webChild = defineDag({ id: "web_child", description: "started by web_parent", maxActiveRuns: 5 })
  .task("child_work", async (ctx) => {
    ctx.log.info("child working");
    await sleep(200, undefined, { signal: ctx.signal });
  })
  .build();

export const webParent = defineDag({ id: "web_parent", description: "waits for a web_child run" })
  .waitingTrigger("wait_child", { triggerDagId: "web_child" })
  .build();

/** Many quick runs at once, for paging the grid. */
export const webQuick = defineDag({ id: "web_quick", description: "one quick task", maxActiveRuns: 16 })
  .task("blink", (ctx) => {
    ctx.log.info("blink");
  })
  .build();

export const webDags = [webOk, webFlaky, webChild, webParent, webQuick];
