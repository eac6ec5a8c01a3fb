// The world's migration set: its Postgres tables (the schema ledger and the catalogue as built, in
// schema world), src/world/migrations/, ledger world.migrations. The runner process applies it at
// start (the world DAGs' tasks and the schema status run there: src/server/main.ts).
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { MigrationSet } from "../migrator.ts";

export const WORLD_MIGRATIONS: MigrationSet = {
  owner: "world",
  dir: path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations"),
  displayDir: "src/world/migrations",
  schema: "world",
  lock: [7300, 2],
};
