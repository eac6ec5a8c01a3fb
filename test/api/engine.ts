// The real engine on a fresh Postgres database per test file, with the test DAGs; stop() stops
// the runner and drops the database (failing if a connection leaked).
import type { Registry } from "prom-client";
import type { RunnerService } from "../../src/runner/service.ts";
import { createTestDatabase, startRunner } from "../runner/helpers.ts";
import { testDags } from "./testDags.ts";

export interface TestEngine {
  runner: RunnerService;
  registry: Registry;
  stop(): Promise<void>;
}

export async function startEngine(): Promise<TestEngine> {
  const db = await createTestDatabase();
  try {
    const runner = await startRunner(db, testDags, { concurrency: 4, leaseSeconds: 5 });
    return {
      runner,
      registry: runner.metrics,
      async stop() {
        try {
          await runner.stop();
        } finally {
          await db.drop();
        }
      },
    };
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
}
