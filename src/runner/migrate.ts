// The runner's migration set: the `runner` schema (the engine's tables and its state machine in
// plpgsql), src/runner/migrations/, ledger runner.migrations (src/migrator.ts applies it). The
// world's and the loader's tables were runner migrations once and are their owners' now
// (src/world/migrations, src/loader/migrations): those files are retired here with the checksums
// they shipped with, so a database that applied them starts, and one that applied another text
// of them does not.
import { migrationsBeside, type MigrationSet } from "../migrator.ts";

export const RUNNER_MIGRATIONS: MigrationSet = migrationsBeside(import.meta.url, {
  owner: "runner",
  schema: "runner",
  lock: [7300, 1],
  retired: [
    {
      id: 5,
      name: "schema_ledger",
      checksum: "71b703d66db9e057cc25122bd98e3408fa5514a91ca27fa06320209a7c31272c",
      movedTo: "src/world/migrations/000001_schema_ledger.sql",
    },
    {
      id: 8,
      name: "schema_catalogue",
      checksum: "32521da0c9f8fe189130d149c535a4c1af7923c460117abf9d26dc7e614e59dd",
      movedTo: "src/world/migrations/000002_schema_catalogue.sql",
    },
    {
      id: 13,
      name: "loader_control",
      checksum: "70cab0958ad191d38aeaa8e7ecba137e461e9b9910a8bd1f898a31752edd0bb2",
      movedTo: "src/loader/migrations/000001_control.sql",
    },
  ],
});
