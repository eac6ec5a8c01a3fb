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
