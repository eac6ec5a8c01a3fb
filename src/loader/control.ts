// Who decides whether the loaders consume: the world DAGs, through one control row in Postgres
// (schema loader, src/loader/migrations). A DAG task asks for 'consuming' or 'stopped'; each
// request bumps the generation. Each loader of the group (src/loader/main.ts; loader.instances, on
// any host) acts on the newest request and writes the state and generation it has reached into its
// own row of loader.status, beating its heartbeat every second, so a task waits for exactly its own
// request from every live member and can tell a stopped member from a slow one.
import pg from "pg";
import { loadStandConfig, postgresUrl, type StandConfig } from "../config/index.ts";
import { sleepUnlessAborted, throwIfAborted, WorldTaskError, type TaskIo } from "../world/index.ts";

export type IngestDesire = "consuming" | "stopped";
export type LoaderState = "starting" | "consuming" | "stopping" | "stopped" | "failed";

export interface IngestControl {
  desired: IngestDesire;
  generation: number;
  requestedBy: string;
}

export interface LoaderStatus {
  /** Which member: instance name, host and port ("loader-2@host:28091"; loaderInstanceKey). */
  instance: string;
  state: LoaderState;
  generation: number;
  pid: number;
  detail: string;
  /** Milliseconds since the service's last heartbeat, by the database's clock. */
  heartbeatAgeMs: number;
}

/** A loader whose start failed tries again this long after (src/loader/main.ts). */
export const RETRY_AFTER_FAILURE_MS = 5000;
/** How long setIngest waits on a member that reports 'failed': through two of its retries, so a
 * transient refusal (a topic created a moment ago whose partitions the broker does not serve yet)
 * is not taken for a lasting one. */
export const FAILED_FOR_GOOD_AFTER_MS = 2 * RETRY_AFTER_FAILURE_MS + 1000;

/** A status older than this means the loader service is not running. */
export const HEARTBEAT_STALE_MS = 5000;
/** A member silent this long has left the group for good (an instance removed from the config): its row is no longer named. */
export const MEMBER_FORGOTTEN_MS = 3_600_000;

/** The key of a member's status row: its instance name, this host and its port. */
export function loaderInstanceKey(name: string, host: string, port: number): string {
  return `${name}@${host}:${port}`;
}

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

/** Every member heard from within MEMBER_FORGOTTEN_MS, by instance key. */
export async function readLoaderStatuses(db: pg.Pool): Promise<LoaderStatus[]> {
  const { rows } = await db.query<{ instance: string; state: LoaderState; generation: string; pid: number; detail: string; age_ms: number }>(
    `select instance, state, generation, pid, detail, (extract(epoch from (now() - heartbeat_at)) * 1000)::float8 as age_ms
       from loader.status where heartbeat_at > now() - make_interval(secs => $1) order by instance`,
    [MEMBER_FORGOTTEN_MS / 1000],
  );
  return rows.map((row) => ({ instance: row.instance, state: row.state, generation: Number(row.generation), pid: row.pid, detail: row.detail, heartbeatAgeMs: row.age_ms }));
}

export async function writeLoaderStatus(db: pg.Pool, status: Omit<LoaderStatus, "heartbeatAgeMs">): Promise<void> {
  await db.query(
    `insert into loader.status (instance, state, generation, pid, detail, heartbeat_at) values ($1, $2, $3, $4, $5, now())
     on conflict (instance) do update set state = $2, generation = $3, pid = $4, detail = $5, heartbeat_at = now()`,
    [status.instance, status.state, status.generation, status.pid, status.detail],
  );
}

const isLive = (status: LoaderStatus): boolean => status.heartbeatAgeMs <= HEARTBEAT_STALE_MS;

/** One member in words: what it does when its heartbeat is fresh, DOWN with its last word as history when not. */
export function describeLoaderStatus(status: LoaderStatus | undefined): string {
  if (!status) return "the loader service has never reported (is it running? make check-services)";
  const age = `${(status.heartbeatAgeMs / 1000).toFixed(1)} s ago`;
  if (!isLive(status)) {
    if (status.state === "stopped") return `${status.instance} stopped (its process ended cleanly ${(status.heartbeatAgeMs / 1000).toFixed(0)} s ago)`;
    // a dead process's last row is not its state: say down, and give the last word as history
    return `${status.instance} DOWN: no heartbeat for ${(status.heartbeatAgeMs / 1000).toFixed(0)} s (its last word, from pid ${status.pid}, was "${status.state}" at generation ${status.generation}); make check-services shows whether it runs, make up starts it`;
  }
  return `${status.instance} pid ${status.pid} ${status.state} at generation ${status.generation}${status.detail ? ` (${status.detail})` : ""}, last heard ${age}`;
}

/** The group in words: every member heard from lately, live ones first. */
export function describeLoaders(statuses: readonly LoaderStatus[]): string {
  if (statuses.length === 0) return describeLoaderStatus(undefined);
  const ordered = [...statuses.filter(isLive), ...statuses.filter((s) => !isLive(s))];
  const live = ordered.filter(isLive).length;
  const head = statuses.length === 1 ? "" : `${live} of ${statuses.length} loaders live: `;
  return head + ordered.map(describeLoaderStatus).join("; ");
}

/** Where a request of `generation` for `desired` stands across the group's members. */
export type GroupProgress = { done: true; live: LoaderStatus[] } | { done: false; failed?: LoaderStatus };

export function groupReached(statuses: readonly LoaderStatus[], desired: IngestDesire, generation: number): GroupProgress {
  const live = statuses.filter(isLive);
  // stopping: a member that is not running holds nothing; consuming: the live members take every
  // partition between them (a dead member's go to the others), so at least one must consume
  if (live.length === 0) return desired === "stopped" ? { done: true, live } : { done: false };
  const failed = live.find((s) => s.generation >= generation && s.state === "failed");
  if (failed) return { done: false, failed };
  return live.every((s) => s.generation >= generation && s.state === desired) ? { done: true, live } : { done: false };
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
export async function setIngest(input: SetIngestInput): Promise<LoaderStatus[]> {
  const step = input.desired === "consuming" ? "startIngest" : "stopIngest";
  const timeoutMs = input.timeoutMs ?? 120_000;
  const db = controlPool(input.config);
  try {
    const generation = await requestIngest(db, input.desired, input.requestedBy);
    input.log(`asked the loader for '${input.desired}' (generation ${generation})`);
    const started = Date.now();
    let lastLog = started;
    /** When a member was first seen failed: it retries on its own, so only a failure that lasts ends the wait. */
    let failedSince: number | undefined;
    for (;;) {
      throwIfAborted(input.signal, step);
      const statuses = await readLoaderStatuses(db);
      const progress = groupReached(statuses, input.desired, generation);
      if (progress.done && progress.live.length === 0) {
        input.log(`no loader service is running, so nothing consumes: ${describeLoaders(statuses)}`);
        return progress.live;
      }
      if (progress.done) {
        input.log(`loader ${input.desired} after ${Date.now() - started} ms: ${describeLoaders(statuses)}`);
        return progress.live;
      }
      if (progress.failed) {
        failedSince ??= Date.now();
        if (Date.now() - failedSince >= FAILED_FOR_GOOD_AFTER_MS) {
          throw new WorldTaskError(step, `the loader could not reach '${input.desired}' (still failing after ${Math.round((Date.now() - failedSince) / 1000)} s of its retries): ${describeLoaderStatus(progress.failed)}. Its log is .stand/loader/loader.log (or the test stand's; loader-N/ for instance N).`);
        }
      }
      if (Date.now() - started >= timeoutMs) {
        throw new WorldTaskError(
          step,
          `the loader did not reach '${input.desired}' (generation ${generation}) within ${timeoutMs / 1000} s: ${describeLoaders(statuses)}. ` +
            "make check-services shows the loader services; their logs are under the stand's state directory (loader/loader.log, loader-N/).",
        );
      }
      if (Date.now() - lastLog >= 5000) {
        lastLog = Date.now();
        input.log(`waiting for the loader to reach '${input.desired}' (generation ${generation}): ${describeLoaders(statuses)}`);
      }
      await sleepUnlessAborted(200, input.signal, step);
    }
  } finally {
    await db.end();
  }
}

/** Makes sure the loaders consume: asks only when the control row says otherwise or a live member lags, then waits either way. */
export async function ensureConsuming(input: Omit<SetIngestInput, "desired">): Promise<void> {
  const db = controlPool(input.config);
  let control: IngestControl;
  let statuses: LoaderStatus[];
  try {
    control = await readIngestControl(db);
    statuses = await readLoaderStatuses(db);
  } finally {
    await db.end();
  }
  const progress = groupReached(statuses, "consuming", control.generation);
  if (control.desired === "consuming" && progress.done && progress.live.length > 0) return;
  await setIngest({ ...input, desired: "consuming" });
}
