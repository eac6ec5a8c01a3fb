// The door of src/cli/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { ApiResponseError, EXIT, RunnerApiClient } from "./client.ts";
export { trigger } from "./commands.ts";
export { table } from "./format.ts";
