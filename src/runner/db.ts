// Postgres access for the engine: one pool, named (prepared) statements for the hot paths, and a
// transaction helper. SQL text lives beside the module that uses it, as small constants.
import pg from "pg";

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

/** Errors that mean "the server is not there right now" (restarting, refusing, starting up). */
const RECONNECTABLE = new Set(["ECONNREFUSED", "ECONNRESET", "57P01", "57P02", "57P03", "08001", "08006"]);

export function isReconnectable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && RECONNECTABLE.has(code);
}

export interface Patience {
  /** How long connect() keeps trying while the server is away, in ms. */
  patienceMs: number;
  /** Called on each failed attempt: what failed, attempts so far, ms waited so far. */
  onRetry: (err: unknown, attempts: number, waitedMs: number) => void;
}

/**
 * A pool whose promise-style connect() waits for a restarting server instead of failing at once.
 * graphile-worker marks a job failed or complete with a connect() whose rejection nobody awaits
 * (0.17: ECONNREFUSED is not among its retryable codes), so a Postgres restart during a failing
 * job crashed the whole runner; with this pool those writes wait for the server to come back.
 */
class PatientPool extends pg.Pool {
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
    return this.connectPatiently();
  }

  private async connectPatiently(): Promise<pg.PoolClient> {
    const started = Date.now();
    for (let attempts = 1; ; attempts++) {
      try {
        return await super.connect();
      } catch (err) {
        const waited = Date.now() - started;
        if (!isReconnectable(err) || this.ending || waited >= this.patience.patienceMs) throw err;
        this.patience.onRetry(err, attempts, waited);
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * attempts, 2000)));
      }
    }
  }
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
