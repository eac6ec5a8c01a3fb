// The door of src/stand/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { describeFindings, quietStandContext, safeStandFindings } from "./diagnose.ts";
export type { Finding } from "./diagnose.ts";
export { WORLD_SERVICES, standContext, standDown, standStatus, standUp } from "./stand.ts";
