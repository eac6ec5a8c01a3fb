// The door of src/api/: what other rooms may import from it. Generated from their imports, then kept by hand;
// eslint refuses an import that goes past it (tests may open a room to test its insides).
export { createApp } from "./app.ts";
export type { CreateAppOptions, RunnerApp } from "./app.ts";
export type { ConnectionSources, ConnectionTester } from "./context.ts";
export { assertOpenListenSecured, isLoopbackHost } from "./auth.ts";
export type { LoginConfig } from "./auth.ts";
export { assertStorableJson } from "./body-checks.ts";
export { LoginThrottle } from "./login-throttle.ts";
export { ApiProblem, problemForRunnerError, sendProblem, titleFor } from "./problem.ts";
export type { ProblemBody } from "./problem.ts";
export { defineRoute } from "./route.ts";
export type { RouteSpec } from "./route.ts";
export { dagIdSchema, runIdSchema, taskIdSchema, variableKeySchema } from "./schemas.ts";
export type { DagResponse, DagRunResponse, DagVersionResponse, LogResponse, SchemaStatusResponse, TaskInstanceResponse, VariableChangeResponse, VariableResponse } from "./schemas.ts";
export { NOT_SERVED } from "./routes/not-served.ts";
