// The door of src/runner/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { Dag, defineDag } from "./dag.ts";
export type { TaskContext } from "./dag.ts";
export { ConfValidationError, DagDefinitionError, DagNotFoundError, DagStaleError, DagVersionNotFoundError, DagRunNotFoundError, DuplicateRunError, NonRetryableError, PG_ERROR, RunNotRebindableError, TaskInstanceNotFoundError, TryNotFoundError, UnknownTaskIdsError, VariableNotFoundError } from "./errors.ts";
export { RUNNER_MIGRATIONS } from "./migrate.ts";
export { DagRegistry } from "./registry.ts";
export { createRunner } from "./runner.ts";
export type { Runner, RunnerOptions } from "./runner.ts";
export type { RunnerService } from "./service.ts";
export { RUN_STATES, TASK_STATES, TERMINAL_RUN_STATES, TERMINAL_TASK_STATES } from "./types.ts";
export type { DagVersionsQuery } from "./dag-reads.ts";
export { RUN_SORT_FIELDS, type RunListQuery, type RunSortField } from "./run-list.ts";
export { TASK_INSTANCE_SORT_FIELDS, type ListedTaskInstance, type TaskInstanceListQuery, type TaskInstanceSortField } from "./task-instance-list.ts";
export { sortKeys, type Range, type SortKey } from "./list-sql.ts";
export type { TaskDependency, TaskTryRecord } from "./task-explain.ts";
export type { DagRunRecord, DagSourceRecord, DagSummary, DagTaskRecord, DagVersionRecord, ImportErrorRecord, JsonValue, RunConf, RunState, TaskInstanceRecord, TaskLogRecord, TaskState, VariableChange, VariableRecord } from "./types.ts";
export { DAGS_CHANNEL, DEFAULT_BUNDLE, knownCodeHashes, PARSE_CHANNEL, publishDags, readCurrentDags, readVersionCode, sha256, takeParseRequests } from "./dag-versions.ts";
export type { CurrentDag, DagCode, PublishedDag, PublishedVersion } from "./dag-versions.ts";
