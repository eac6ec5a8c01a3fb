// Small DAGs for the API and CLI tests: one that succeeds, one that fails after a retry, one slow.
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { defineDag } from "../../src/runner/dag.ts";

export const apiOk = defineDag({
  id: "api_ok",
  description: "two tasks in a row",
  fileloc: "test/api/test-dags.ts",
  params: z.object({ days: z.number().int().min(0).optional() }).strict(),
})
  .task("first", async (ctx) => {
    ctx.log.info(`first runs with days=${ctx.conf.days ?? "unset"}`);
    await sleep(150, undefined, { signal: ctx.signal });
  })
  .task("second", { upstream: ["first"] }, async (ctx) => {
    ctx.log.info("second runs after first");
    await sleep(150, undefined, { signal: ctx.signal });
  })
  .build();

export const apiFail = defineDag({ id: "api_fail", description: "fails on every try", fileloc: "test/api/test-dags.ts" })
  .task("boom", { retries: 1, retryDelayMs: 50 }, (ctx) => {
    ctx.log.info(`boom attempt ${ctx.tryNumber}`);
    throw new Error(`boom on try ${ctx.tryNumber}`);
  })
  .task("after", { upstream: ["boom"] }, (ctx) => {
    ctx.log.info("never runs");
  })
  .build();

// hold_first_try: the first try naps until its run is marked (its signal aborts; 60 s at most),
// so a client sees it running for as long as it needs, by construction; a cleared try naps 1.5 s.
export const apiSlow = defineDag({
  id: "api_slow",
  description: "one task that takes a while",
  fileloc: "test/api/test-dags.ts",
  params: z.object({ hold_first_try: z.boolean().optional() }).strict(),
})
  .task("nap", async (ctx) => {
    ctx.log.info("napping");
    const held = ctx.conf.hold_first_try === true && ctx.tryNumber === 1;
    await sleep(held ? 60_000 : 1500, undefined, { signal: ctx.signal });
  })
  .build();

export const testDags = [apiOk, apiFail, apiSlow];
