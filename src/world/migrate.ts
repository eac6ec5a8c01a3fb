// The world's migration set: its Postgres tables (the schema ledger and the catalogue as built, in
// schema world), src/world/migrations/, ledger world.migrations. The runner process applies it at
// start (the world DAGs' tasks and the schema status run there: src/server/main.ts).
import { migrationsBeside, type MigrationSet } from "../migrator.ts";

export const WORLD_MIGRATIONS: MigrationSet = migrationsBeside(import.meta.url, {
  owner: "world",
  schema: "world",
  lock: [7300, 2],
});
