// The loader's migration set: its control row and status (schema loader), src/loader/migrations/,
// ledger loader.migrations. Both the loader service (src/loader/main.ts) and the runner process
// (whose world tasks ask the loader through these tables) apply it at start, whichever comes first;
// its lock makes the second a no-op.
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { MigrationSet } from "../migrator.ts";

export const LOADER_MIGRATIONS: MigrationSet = {
  owner: "loader",
  dir: path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations"),
  displayDir: "src/loader/migrations",
  schema: "loader",
  lock: [7300, 3],
};
