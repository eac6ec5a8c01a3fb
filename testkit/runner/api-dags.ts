// Small DAGs for the API and CLI tests: one that succeeds, one that fails after a retry, one slow;
// beside them one scheduled (backfills) and one of task groups' tasks.
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { defineDag } from "../../src/runner/index.ts";

/**
 * Holds for api_ok's tasks when a run's conf says hold: true: each task waits until the test
 * releases it by "<run id>/<task id>" (the CLI test does once the CLI printed the task running),
 * at most 30 s; so a client polling the run sees every task running, by construction.
 */
export const taskHolds = {
  waiting: new Map<string, { release: () => void; released: Promise<void> }>(),
  entry(key: string) {
    let entry = this.waiting.get(key);
    if (!entry) {
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      entry = { release, released };
      this.waiting.set(key, entry);
    }
    return entry;
  },
  release(key: string): void {
    this.entry(key).release();
  },
  async hold(key: string, signal: AbortSignal): Promise<"released" | "timed out"> {
    // unref'd: a released hold's timer must not keep the test process alive for the rest of its 30 s
    const timeout = sleep(30_000, "timed out" as const, { signal, ref: false });
    return Promise.race([this.entry(key).released.then(() => "released" as const), timeout]);
  },
};

export const apiOk = defineDag({
  id: "api_ok",
  description: "two tasks in a row",
  fileloc: "testkit/runner/api-dags.ts",
  params: z.object({ days: z.number().int().min(0).optional(), hold: z.boolean().optional() }).strict(),
})
  .task("first", async (ctx) => {
    ctx.log.info(`first runs with days=${ctx.conf.days ?? "unset"}`);
    if (ctx.conf.hold === true) ctx.log.info(`first: ${await taskHolds.hold(`${ctx.runId}/first`, ctx.signal)}`);
    else await sleep(150, undefined, { signal: ctx.signal });
    await ctx.xcom.push("return_value", { days: ctx.conf.days ?? null, try: ctx.tryNumber });
  })
  .task("second", { upstream: ["first"] }, async (ctx) => {
    ctx.log.info("second runs after first");
    const first = await ctx.xcom.pull("first");
    await ctx.xcom.push("seen_from_first", first ?? "nothing");
    if (ctx.conf.hold === true) ctx.log.info(`second: ${await taskHolds.hold(`${ctx.runId}/second`, ctx.signal)}`);
    else await sleep(150, undefined, { signal: ctx.signal });
  })
  .build();

export const apiFail = defineDag({ id: "api_fail", description: "fails on every try", fileloc: "testkit/runner/api-dags.ts" })
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
  fileloc: "testkit/runner/api-dags.ts",
  params: z.object({ hold_first_try: z.boolean().optional() }).strict(),
})
  .task("nap", async (ctx) => {
    ctx.log.info("napping");
    const held = ctx.conf.hold_first_try === true && ctx.tryNumber === 1;
    await sleep(held ? 60_000 : 1500, undefined, { signal: ctx.signal });
  })
  .build();

export const testDags = [apiOk, apiFail, apiSlow];

/** A scheduled DAG for the backfill calls (a backfill needs a schedule). Not in testDags, whose DAGs
 * other tests count: a test that backfills adds it to its runner's DAGs. */
export const apiDaily = defineDag({ id: "api_daily", description: "one quick task a day", schedule: { everySeconds: 86_400 }, fileloc: "testkit/runner/api-dags.ts" })
  .task("tick", (ctx) => {
    ctx.log.info(`tick for ${ctx.logicalDate?.toISOString() ?? "no date"}`);
  })
  .build();

/** Tasks named as Airflow's task groups name theirs (`grp.a`, a nested group's `grp.inner.b`) beside
 * one whose name only starts alike (`grpX.a`), for PATCH …/taskGroupInstances. Not in testDags. With
 * conf hold: true, start waits for taskHolds.release("<run id>/start"), so the tasks after it stay scheduled. */
export const apiGrouped = defineDag({
  id: "api_grouped",
  description: "tasks named as Airflow's task groups name them",
  fileloc: "testkit/runner/api-dags.ts",
  params: z.object({ hold: z.boolean().optional() }).strict(),
})
  .task("start", async (ctx) => {
    if (ctx.conf.hold === true) ctx.log.info(`start: ${await taskHolds.hold(`${ctx.runId}/start`, ctx.signal)}`);
  })
  .task("grp.a", { upstream: ["start"] }, () => undefined)
  .task("grp.inner.b", { upstream: ["grp.a"] }, () => undefined)
  .task("grpX.a", { upstream: ["start"] }, () => undefined)
  .task("end", { upstream: ["grp.inner.b", "grpX.a"] }, () => undefined)
  .build();
