// Postgres access for the engine: one pool, named (prepared) statements for the hot paths, and a
// transaction helper. SQL text lives beside the module that uses it, as small constants.
import pg from "pg";
import { errorCode } from "../errors.ts";

export type Queryable = pg.Pool | pg.PoolClient | pg.Client;

/** A statement with a stable name, so pg prepares it once per connection. */
export interface Statement {
  name: string;
  text: string;
}

export function statement(name: string, text: string): Statement {
  return { name: `runner_${name}`, text };
}

const INT8_OID = 20;

/** bigint ids and counts come back as numbers: ours stay far below 2^53. */
const typeParsers = new pg.TypeOverrides();
typeParsers.setTypeParser(INT8_OID, "text", (value) => Number(value));

export function createPool(connectionString: string, max: number): pg.Pool {
  return new pg.Pool({ connectionString, max, types: typeParsers, application_name: "dag-runner" });
}

/** Errors that mean "the server is not there right now" (restarting, refusing, starting up), or
 * that it ended the connection under a statement (admin shutdown, crash, reset): SQLSTATE class 08
 * and 57P01-57P03, and the socket's own codes. */
const RECONNECTABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006"]);

function isReconnectable(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && RECONNECTABLE.has(code);
}

/**
 * Whether an error means the connection went away rather than the statement failing: a server
 * error (pg's DatabaseError) only with a reconnectable SQLSTATE, any other error (the socket's, or
 * pg's "connection terminated" which carries no code) always. Classified by type and code, never
 * by message text.
 */
export function isConnectionLoss(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return isReconnectable(err);
  return err instanceof Error && !(err instanceof TypeError) && !(err instanceof RangeError);
}

/** Runs `work` again while it fails for a lost connection (isConnectionLoss), for up to `patienceMs`;
 * for single statements that may run twice to the same effect. */
export async function withConnectionPatience<T>(work: () => Promise<T>, patienceMs: number, onRetry: (err: unknown, attempts: number) => void): Promise<T> {
  const started = Date.now();
  for (let attempts = 1; ; attempts++) {
    try {
      return await work();
    } catch (err) {
      if (!isConnectionLoss(err) || Date.now() - started >= patienceMs) throw err;
      onRetry(err, attempts);
      await sleep(retryDelayMs(attempts));
    }
  }
}

export interface Patience {
  /** How long connect() and a job write keep trying while the server is away, in ms. */
  patienceMs: number;
  /** Called on each failed attempt: what failed, attempts so far, ms waited so far. */
  onRetry: (err: unknown, attempts: number, waitedMs: number) => void;
  /** Called when a job write lost its connection and is sent again on another one. */
  onJobWriteRetry?: (err: unknown, statement: string) => void;
}

/**
 * graphile-worker's statements that mark jobs done, failed or returned to the queue, by their
 * prepared names (`<name>/<schema>`). Each is one statement outside any transaction, and each may
 * run twice to the same effect: a delete by job id, or an update of rows still locked by this pool.
 * graphile-worker (0.17 and 0.18 alike) sends them without awaiting them and retries neither a
 * terminated connection (57P01) nor a lost one, so a Postgres restart under one rejected a promise
 * nobody held and the runner process exited. test/runner/queue-writes.test.ts checks that the
 * installed graphile-worker still uses these names.
 */
export const JOB_WRITE_STATEMENTS: readonly string[] = [
  "complete_job",
  "complete_jobs",
  "complete_job_q",
  "fail_job",
  "fail_jobs",
  "fail_job_q",
  "return_job",
  "return_job_q",
];
const JOB_WRITE = new RegExp(`^(${JOB_WRITE_STATEMENTS.join("|")})/`);

/** The statement name of a job write, or undefined for any other query. */
function jobWriteName(args: readonly unknown[]): string | undefined {
  if (args.length !== 1) return undefined;
  const name = (args[0] as { name?: unknown } | null)?.name;
  return typeof name === "string" && JOB_WRITE.test(name) ? name : undefined;
}

type QueryFn = (...args: unknown[]) => Promise<pg.QueryResult>;

/** What the queue pool knows of each of its connections. */
interface ConnectionState {
  /** The server's last ReadyForQuery said "idle": not inside a transaction. */
  idle: boolean;
  /** The connection failed or ended: nothing more can run on it. */
  lost: boolean;
}

/**
 * The job queue's pool. Its promise-style connect() waits for a restarting server instead of
 * failing at once, and a job write (JOB_WRITE_STATEMENTS) whose connection was lost under it
 * (terminated by a restart, killed with the server, reset) is sent again on a fresh connection
 * until it lands or the patience is spent. Only a statement sent outside a transaction is sent
 * again; any other query fails as pg fails it.
 */
class PatientPool extends pg.Pool {
  private readonly states = new WeakMap<pg.PoolClient, ConnectionState>();

  constructor(
    config: pg.PoolConfig,
    private readonly patience: Patience,
  ) {
    super(config);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(
    callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<pg.PoolClient> | undefined {
    if (callback !== undefined) {
      super.connect(callback);
      return undefined;
    }
    return this.connectPatiently().then((client) => this.durable(client));
  }

  private async connectPatiently(): Promise<pg.PoolClient> {
    const started = Date.now();
    for (let attempts = 1; ; attempts++) {
      try {
        return await super.connect();
      } catch (err) {
        const waited = Date.now() - started;
        // a server that is shutting down may accept a connection and close it during the
        // handshake ("Connection terminated unexpectedly", no code): that is a restart too
        if (!isConnectionLoss(err) || this.ending || waited >= this.patience.patienceMs) throw err;
        this.patience.onRetry(err, attempts, waited);
        await sleep(retryDelayMs(attempts));
      }
    }
  }

  /** Watches a new connection's state and routes its job writes through writeJob (once per connection). */
  private durable(client: pg.PoolClient): pg.PoolClient {
    if (this.states.has(client)) return client;
    const state: ConnectionState = { idle: true, lost: false };
    this.states.set(client, state);
    client.connection.on("readyForQuery", (msg: { status?: string }) => {
      state.idle = msg.status === "I";
    });
    const lost = () => {
      state.lost = true;
    };
    client.on("error", lost);
    client.on("end", lost);
    const original = client.query.bind(client) as QueryFn;
    const routed: QueryFn = (...args) => {
      const name = jobWriteName(args);
      return name === undefined ? original(...args) : this.writeJob(state, original, args[0], name);
    };
    client.query = routed as typeof client.query;
    return client;
  }

  private async writeJob(state: ConnectionState, original: QueryFn, config: unknown, name: string): Promise<pg.QueryResult> {
    const outsideTransaction = state.idle;
    try {
      return await original(config);
    } catch (err) {
      if (!outsideTransaction || !(state.lost || isConnectionLoss(err))) throw err;
      this.patience.onJobWriteRetry?.(err, name);
      return this.writeJobElsewhere(config, err);
    }
  }

  /** Sends a job write on fresh connections until one answers, for as long as the patience lasts. */
  private async writeJobElsewhere(config: unknown, first: unknown): Promise<pg.QueryResult> {
    const started = Date.now();
    let last = first;
    for (let attempts = 1; ; attempts++) {
      const waited = Date.now() - started;
      if (this.ending || waited >= this.patience.patienceMs) throw last;
      const client = this.durable(await this.connectPatiently());
      const state = this.states.get(client);
      try {
        const result = await (pg.Client.prototype.query as QueryFn).call(client, config);
        client.release();
        return result;
      } catch (err) {
        const gone = state?.lost === true || isConnectionLoss(err);
        client.release(gone);
        if (!gone) throw err;
        last = err;
        this.patience.onRetry(err, attempts, waited);
        await sleep(retryDelayMs(attempts));
      }
    }
  }
}

/** The pause before the next attempt of a patient connect or write: 250 ms more each time, 2 s at most. */
function retryDelayMs(attempts: number): number {
  return Math.min(250 * attempts, 2000);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function createPatientPool(connectionString: string, max: number, patience: Patience): pg.Pool {
  return new PatientPool({ connectionString, max, types: typeParsers, application_name: "dag-runner-queue" }, patience);
}

export function createClient(connectionString: string): pg.Client {
  return new pg.Client({ connectionString, types: typeParsers, application_name: "dag-runner-listen" });
}

/** Runs a named statement and returns its rows. */
export async function query<R extends pg.QueryResultRow>(
  db: Queryable,
  stmt: Statement,
  values: unknown[],
): Promise<R[]> {
  const result = await db.query<R>({ name: stmt.name, text: stmt.text, values });
  return result.rows;
}

/** Runs a named statement and returns its first row, if any. */
export async function queryOne<R extends pg.QueryResultRow>(
  db: Queryable,
  stmt: Statement,
  values: unknown[],
): Promise<R | undefined> {
  const rows = await query<R>(db, stmt, values);
  return rows[0];
}

export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("begin");
    const result = await work(client);
    await client.query("commit");
    return result;
  } catch (err) {
    await client.query("rollback").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** The database name in a postgres:// URL (for messages and for test databases). */
export function databaseOf(connectionString: string): string {
  return decodeURIComponent(new URL(connectionString).pathname.replace(/^\//, ""));
}
