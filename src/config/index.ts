// The door of src/config/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { CAPTURE_MODES, compileLoaderConfig, INSERT_FORMATS } from "./loader.ts";
export type { CaptureMode, InsertFormat, LoaderConfig, LoaderConfigInput } from "./loader.ts";
export { apiBaseUrl, apiListenHost, clickhouseHttpUrl, collectPorts, currentInstance, instancesOf, isLoopbackHost, kafkaBroker, launchArgs, loadStandConfig, loaderListenHost, parseStandConfig, poolInstance, postgresUrl, processEnv, repoRoot, standConfigPath, stateDir } from "./stand.ts";
export type { BiConfig, ClickHouseNodeConfig, PoolKind, StandConfig } from "./stand.ts";
