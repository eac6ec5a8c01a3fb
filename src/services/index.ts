// The door of src/services/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { clickhouseNodeService } from "./clickhouse.ts";
export { kafkaService } from "./kafka.ts";
export { ensureLoaders, loaderBaseUrl, loaderHealth, loaderInstances, loaderSpec, loaderStatuses, stopLoaders } from "./loader-service.ts";
export { ensureNodeService, launchNodeService, nodeServicePaths, nodeServicePid, nodeServiceSupervisor, stopNodeService } from "./node-service.ts";
export type { EnsureOutcome, NodeServiceSpec, StopOutcome } from "./node-service.ts";
export { standPaths } from "./paths.ts";
export type { StandPaths } from "./paths.ts";
export { postgresBinDir, postgresService, removeExternalDataDir } from "./postgres.ts";
export { ensureRunner, ensureRunners, runnerHealthy, runnerInstances, runnerPid, runnerSpec, stopRunner, stopRunners } from "./runner-service.ts";
export { answersWithin, launchIfNeeded, launchNow, probedStatus, serves, serviceStatus, waitUntilHealthy } from "./service.ts";
export type { ProbeAnswer, ServiceDefinition, ServiceStatus, StandContext } from "./service.ts";
export { Supervisor, isPortOpen, isProcessOurs, tailFile } from "./supervisor.ts";
export type { ExitInfo, PidRecord, Want } from "./supervisor.ts";
export { zookeeperService } from "./zookeeper.ts";
