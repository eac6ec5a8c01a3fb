// world_live — the live switch: every 25 minutes it plays the next day through world_live_day.
// Created paused; unpausing it is switching the live world on (web view or `runner unpause
// world_live`). It has no guard of its own: it goes red when world_live_day refuses.
// A manual trigger may pass conf.speed on to world_live_day.
import { z } from "zod";
import { defineDag, type RunConf } from "../src/runner/index.ts";

export default defineDag({
  id: "world_live",
  description: "The live switch (its pause flag): every 25 minutes, play the next day live through world_live_day",
  schedule: { everySeconds: 25 * 60 },
  // every world DAG holds the world for its whole run; its children run inside that hold
  exclusive: ["world"],
  isPausedUponCreation: true,
  maxActiveRuns: 1,
  params: z.object({ speed: z.number().min(30).max(1_000_000).optional() }).strict(),
  fileloc: "dags/world_live.ts",
})
  .waitingTrigger("world_live_day", {
    triggerDagId: "world_live_day",
    conf: (ctx): RunConf => (ctx.conf.speed === undefined ? {} : { speed: ctx.conf.speed }),
  })
  .build();
