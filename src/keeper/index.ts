// The door of src/keeper/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { KEEPER_SERVICE, ensureKeeper, keeperSpec, readKeeperStateFile, readKeeperView, stopKeeper, watchKeeper, writeKeeperState } from "./keeper-service.ts";
export type { KeeperStateFile, KeeperView } from "./keeper-service.ts";
export { keptServices } from "./kept-services.ts";
export { Keeper, describeLastExit } from "./policy.ts";
export type { ServiceRecord } from "./policy.ts";
