// The door of src/server/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { createStandApp } from "./app.ts";
export { SERVER_MIGRATION_SETS } from "./migration-sets.ts";
