// The engine the API tests run against. TEMPORARY: a fake until src/runner/runner.ts lands.
import { Registry } from "prom-client";
import type { RunnerService } from "../../src/runner/service.ts";
import { createFakeRunner } from "./fakeRunner.ts";

export interface TestEngine {
  runner: RunnerService;
  registry: Registry;
  stop(): Promise<void>;
}

export function startEngine(_label: string): Promise<TestEngine> {
  const runner = createFakeRunner();
  return Promise.resolve({ runner, registry: new Registry(), stop: () => Promise.resolve(runner.stop()) });
}
