// The runner's public surface: the DAG builder for dags/, createRunner for the process that runs
// them, and the contract types for everything that talks to it.
export { Dag, DagBuilder, defineDag } from "./dag.ts";
export type {
  BranchResult,
  DagOptions,
  Schedule,
  TaskContext,
  TaskFn,
  TaskOptions,
  TaskResult,
  TaskVariables,
  WaitingTriggerOptions,
} from "./dag.ts";
export { DagRegistry } from "./registry.ts";
export { createRunner } from "./runner.ts";
export type { Runner, RunnerOptions } from "./runner.ts";
export type { RunnerService } from "./service.ts";
export * from "./errors.ts";
export * from "./types.ts";
