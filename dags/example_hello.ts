// A tiny example DAG: shows the builder (params, dependencies, retries, a branch) and gives a
// fresh stand something harmless to trigger. Trigger it with conf {"name": "you"}.
import { z } from "zod";
import { defineDag } from "../src/runner/index.ts";

export default defineDag({
  id: "example_hello",
  description: "Says hello to conf.name; skips the farewell when conf.brief is true",
  schedule: null,
  maxActiveRuns: 1,
  params: z.object({ name: z.string().min(1).default("world"), brief: z.boolean().default(false) }),
  fileloc: "dags/example_hello.ts",
})
  .task("greet", (ctx) => {
    ctx.log.info(`hello, ${ctx.conf.name}`);
  })
  .task("decide", { upstream: ["greet"] }, (ctx) => (ctx.conf.brief ? { shortCircuit: true } : undefined))
  .task("farewell", { upstream: ["decide"], retries: 1, retryDelayMs: 1000 }, (ctx) => {
    ctx.log.info(`goodbye, ${ctx.conf.name}`);
  })
  .build();
