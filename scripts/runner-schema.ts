// Writes src/runner/schema.sql, the runner schema after its last migration (testkit/runner/runner-schema.ts),
// from the test stand's Postgres (make runner-schema starts it): run it after adding a migration.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../src/config/index.ts";
import { RUNNER_SCHEMA_FILE, dumpRunnerSchema } from "../testkit/index.ts";

const text = await dumpRunnerSchema();
writeFileSync(RUNNER_SCHEMA_FILE, text);
console.log(`runner-schema: wrote ${path.relative(repoRoot, RUNNER_SCHEMA_FILE)} (${text.split("\n").length} lines)`);
