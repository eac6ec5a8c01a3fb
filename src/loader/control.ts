// Who decides whether the loader consumes: the world DAGs, through one control row in Postgres
// (schema loader, src/loader/migrations). A DAG task asks for 'consuming' or 'stopped'; each
// request bumps the generation. The loader service (src/loader/main.ts) acts on the newest request
// and writes the state and generation it has reached into loader.status, beating its heartbeat every
// second, so a task waits for exactly its own request and can tell a stopped service from a slow one.
import pg from "pg";
import { loadStandConfig, postgresUrl, type StandConfig } from "../config/stand.ts";
import { sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../world/io.ts";

export type IngestDesire = "consuming" | "stopped";
export type LoaderState = "starting" | "consuming" | "stopping" | "stopped" | "failed";

export interface IngestControl {
  desired: IngestDesire;
  generation: number;
  requestedBy: string;
}

export interface LoaderStatus {
  state: LoaderState;
  generation: number;
  pid: number;
  detail: string;
  /** Milliseconds since the service's last heartbeat, by the database's clock. */
  heartbeatAgeMs: number;
}

/** A status older than this means the loader service is not running. */
export const HEARTBEAT_STALE_MS = 5000;

const NO_CONTROL_ROW = "loader.control has no row: the loader's migrations (src/loader/migrations) did not run; start the runner or the loader service (make up)";

export function controlPool(config: StandConfig = loadStandConfig()): pg.Pool {
  const pool = new pg.Pool({ connectionString: postgresUrl(config.postgres.runner_database, config), max: 2 });
  // An idle connection that Postgres drops (a restart) is reported here; unheard, it would crash the
  // process (the runner, whose world tasks poll through this pool). The next query connects again.
  pool.on("error", () => undefined);
  return pool;
}

export async function readIngestControl(db: pg.Pool): Promise<IngestControl> {
  const { rows } = await db.query<{ desired: IngestDesire; generation: string; requested_by: string }>(
    "select desired, generation, requested_by from loader.control where id = 1",
  );
  const row = rows[0];
  if (!row) throw new Error(NO_CONTROL_ROW);
  return { desired: row.desired, generation: Number(row.generation), requestedBy: row.requested_by };
}

export async function requestIngest(db: pg.Pool, desired: IngestDesire, requestedBy: string): Promise<number> {
  const { rows } = await db.query<{ generation: string }>(
    "update loader.control set desired = $1, generation = generation + 1, requested_by = $2, requested_at = now() where id = 1 returning generation",
    [desired, requestedBy],
  );
  const row = rows[0];
  if (!row) throw new Error(NO_CONTROL_ROW);
  return Number(row.generation);
}

export async function readLoaderStatus(db: pg.Pool): Promise<LoaderStatus | undefined> {
  const { rows } = await db.query<{ state: LoaderState; generation: string; pid: number; detail: string; age_ms: number }>(
    `select state, generation, pid, detail, (extract(epoch from (now() - heartbeat_at)) * 1000)::float8 as age_ms
       from loader.status where id = 1`,
  );
  const row = rows[0];
  return row && { state: row.state, generation: Number(row.generation), pid: row.pid, detail: row.detail, heartbeatAgeMs: row.age_ms };
}

export async function writeLoaderStatus(db: pg.Pool, status: Omit<LoaderStatus, "heartbeatAgeMs">): Promise<void> {
  await db.query(
    `insert into loader.status (id, state, generation, pid, detail, heartbeat_at) values (1, $1, $2, $3, $4, now())
     on conflict (id) do update set state = $1, generation = $2, pid = $3, detail = $4, heartbeat_at = now()`,
    [status.state, status.generation, status.pid, status.detail],
  );
}

export function describeLoaderStatus(status: LoaderStatus | undefined): string {
  if (!status) return "the loader service has never reported (is it running? make check-services)";
  const age = `${(status.heartbeatAgeMs / 1000).toFixed(1)} s ago`;
  if (status.heartbeatAgeMs > HEARTBEAT_STALE_MS) {
    // a dead process's last row is not its state: say down, and give the last word as history
    return `loader DOWN: no heartbeat for ${(status.heartbeatAgeMs / 1000).toFixed(0)} s (its last word, from pid ${status.pid}, was "${status.state}" at generation ${status.generation}); make check-services shows whether it runs, make up starts it`;
  }
  return `loader pid ${status.pid} ${status.state} at generation ${status.generation}${status.detail ? ` (${status.detail})` : ""}, last heard ${age}`;
}

export interface SetIngestInput extends TaskIo {
  desired: IngestDesire;
  /** Who asks (dag/run/task), kept in loader.control. */
  requestedBy: string;
  timeoutMs?: number;
  config?: StandConfig;
}

/**
 * Asks the loader to consume or stop and waits until it has: 'consuming' once it is in both groups
 * with its partitions assigned, 'stopped' once it flushed, committed and left them. A service that
 * is not running counts as stopped (it holds nothing); asking a dead service to consume fails after
 * the timeout with its last status and what to do.
 */
export async function setIngest(input: SetIngestInput): Promise<LoaderStatus | undefined> {
  const step = input.desired === "consuming" ? "startIngest" : "stopIngest";
  const timeoutMs = input.timeoutMs ?? 120_000;
  const db = controlPool(input.config);
  try {
    const generation = await requestIngest(db, input.desired, input.requestedBy);
    input.log(`asked the loader for '${input.desired}' (generation ${generation})`);
    const started = Date.now();
    let lastLog = started;
    for (;;) {
      throwIfAborted(input.signal, step);
      const status = await readLoaderStatus(db);
      const alive = status !== undefined && status.heartbeatAgeMs <= HEARTBEAT_STALE_MS;
      if (alive && status.generation >= generation && status.state === input.desired) {
        input.log(`loader ${input.desired} after ${Date.now() - started} ms: ${describeLoaderStatus(status)}`);
        return status;
      }
      if (!alive && input.desired === "stopped") {
        input.log(`the loader service is not running, so nothing consumes: ${describeLoaderStatus(status)}`);
        return status;
      }
      if (alive && status.generation >= generation && status.state === "failed") {
        throw new WorldTaskError(step, `the loader could not reach '${input.desired}': ${describeLoaderStatus(status)}. Its log is .stand/loader/loader.log (or the test stand's).`);
      }
      if (Date.now() - started >= timeoutMs) {
        throw new WorldTaskError(
          step,
          `the loader did not reach '${input.desired}' (generation ${generation}) within ${timeoutMs / 1000} s: ${describeLoaderStatus(status)}. ` +
            "make check-services shows the loader service; its log is under the stand's state directory (loader/loader.log).",
        );
      }
      if (Date.now() - lastLog >= 5000) {
        lastLog = Date.now();
        input.log(`waiting for the loader to reach '${input.desired}' (generation ${generation}): ${describeLoaderStatus(status)}`);
      }
      await sleepUnlessAborted(200, input.signal, step);
    }
  } finally {
    await db.end();
  }
}

/** Makes sure the loader consumes: asks only when the control row says otherwise, then waits either way. */
export async function ensureConsuming(input: Omit<SetIngestInput, "desired">): Promise<void> {
  const db = controlPool(input.config);
  let control: IngestControl;
  let status: LoaderStatus | undefined;
  try {
    control = await readIngestControl(db);
    status = await readLoaderStatus(db);
  } finally {
    await db.end();
  }
  const fresh = status !== undefined && status.heartbeatAgeMs <= HEARTBEAT_STALE_MS;
  if (control.desired === "consuming" && fresh && status?.state === "consuming" && status.generation >= control.generation) return;
  await setIngest({ ...input, desired: "consuming" });
}
