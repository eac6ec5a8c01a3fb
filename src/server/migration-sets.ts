// The migration sets the runner process applies after the runner's own, in this order, before the
// first task runs: the world's (its DAG tasks record the schema ledger and catalogue, the schema
// status reads them) and the loader's (the world tasks ask the loader to consume or stop through
// loader.control and wait on loader.status). The loader service applies the loader's set too, at
// its own start; whichever comes first creates the tables, the other finds them.
import { LOADER_MIGRATIONS } from "../loader/index.ts";
import type { MigrationSet } from "../migrator.ts";
import { WORLD_MIGRATIONS } from "../world/index.ts";

export const SERVER_MIGRATION_SETS: readonly MigrationSet[] = [WORLD_MIGRATIONS, LOADER_MIGRATIONS];
