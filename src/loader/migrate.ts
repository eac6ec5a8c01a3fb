// The loader's migration set: its control row and status (schema loader), src/loader/migrations/,
// ledger loader.migrations. Both the loader service (src/loader/main.ts) and the runner process
// (whose world tasks ask the loader through these tables) apply it at start, whichever comes first;
// its lock makes the second a no-op.
import { migrationsBeside, type MigrationSet } from "../migrator.ts";

export const LOADER_MIGRATIONS: MigrationSet = migrationsBeside(import.meta.url, {
  owner: "loader",
  schema: "loader",
  lock: [7300, 3],
});
