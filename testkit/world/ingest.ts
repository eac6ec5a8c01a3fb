// The loader's control for tests that build or clear the world with the task library instead of the
// DAGs: the loader's migrations are applied to the runner database (loader.control lives there), then
// the test stand's loader service is asked to consume or to stop, as world_initialize and
// world_recreate ask it.
import pg from "pg";
import { loadStandConfig, postgresUrl } from "../../src/config/index.ts";
import { setIngest, type IngestDesire, LOADER_MIGRATIONS } from "../../src/loader/index.ts";
import { migrate } from "../../src/migrator.ts";
import type { TaskIo } from "../../src/world/index.ts";

export async function setTestIngest(io: TaskIo, desired: IngestDesire, requestedBy = "a test"): Promise<void> {
  const config = loadStandConfig();
  const pool = new pg.Pool({ connectionString: postgresUrl(config.postgres.runner_database, config), max: 1 });
  try {
    await migrate(pool, LOADER_MIGRATIONS);
  } finally {
    await pool.end();
  }
  await setIngest({ ...io, desired, requestedBy, timeoutMs: 120_000 });
}
