// Connections (000022_connections.sql): Airflow's stored ways of reaching a system, and the
// outcomes of connection tests kept by token. The list also takes connections kept elsewhere (the
// stand's own services, read-only) so that one ORDER BY and one LIMIT page both kinds together.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { type Queryable, query, queryOne, statement } from "./db.ts";
import { errorCode } from "../errors.ts";
import { PG_ERROR, RunnerError } from "./errors.ts";
import { orderBy, pageTotal, type SortKey, Where } from "./list-sql.ts";
import type { Page } from "./types.ts";

/** A connection as Airflow's ConnectionBody names its fields (connection_id, conn_type, …). */
export interface ConnectionFields {
  connectionId: string;
  connType: string;
  description: string | null;
  host: string | null;
  login: string | null;
  schema: string | null;
  port: number | null;
  password: string | null;
  /** A JSON object's text. */
  extra: string | null;
}

export interface ConnectionRecord extends ConnectionFields {
  /** Kept outside runner.connections (the stand's own): never changed or deleted through the API. */
  readOnly: boolean;
}

export const CONNECTION_TEST_STATES = ["pending", "queued", "running", "success", "failed"] as const;
export type ConnectionTestState = (typeof CONNECTION_TEST_STATES)[number];

export interface ConnectionTestRecord {
  token: string;
  connectionId: string;
  state: ConnectionTestState;
  resultMessage: string | null;
  createdAt: Date;
}

export class ConnectionNotFoundError extends RunnerError {
  constructor(readonly connectionId: string) {
    super(`The Connection with connection_id: \`${connectionId}\` was not found`);
  }
}

export class ConnectionExistsError extends RunnerError {
  constructor(readonly connectionId: string) {
    super(`The connection with connection_id: \`${connectionId}\` already exists; change it with PATCH /api/v2/connections/${connectionId}`);
  }
}

export class ConnectionTestNotFoundError extends RunnerError {
  constructor() {
    // the token is a secret of whoever enqueued the test: not echoed back
    super("No connection test found for this token (Airflow-Connection-Test-Token); results are kept for a day");
  }
}

export class ConnectionTestActiveError extends RunnerError {
  constructor(readonly connectionId: string) {
    super(`An active connection test already exists for connection_id \`${connectionId}\`.`);
  }
}

export const CONNECTION_SORT_FIELDS = ["conn_id", "conn_type", "description", "host", "port", "id", "team_name", "connection_id"] as const;
export type ConnectionSortField = (typeof CONNECTION_SORT_FIELDS)[number];
const SORT_COLUMNS: Record<ConnectionSortField, string> = {
  conn_id: "l.connection_id", connection_id: "l.connection_id", conn_type: "l.conn_type", description: "l.description",
  host: "l.host", port: "l.port", id: "l.id",
  // teams are not supported: every connection's is null
  team_name: "null::text",
};

export interface ConnectionListQuery {
  limit: number;
  offset: number;
  /** Airflow's connection_id_pattern (ILIKE substring, | for or) and connection_id_prefix_pattern. */
  pattern?: string;
  prefix?: string;
  orderBy: readonly SortKey<ConnectionSortField>[];
  /** Connections kept outside the table, listed (and sorted) with the stored ones, before them by id;
   * a stored connection of the same id is hidden behind one of these. */
  alsoListed: readonly ConnectionFields[];
}

const COLUMNS = "connection_id, conn_type, description, host, login, schema, port, password, extra";
const GET = statement("connection_get", `select ${COLUMNS} from runner.connections where connection_id = $1`);
const INSERT = statement(
  "connection_insert",
  `insert into runner.connections (${COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning ${COLUMNS}`,
);
const UPDATE = statement(
  "connection_update",
  `update runner.connections
      set conn_type = $2, description = $3, host = $4, login = $5, schema = $6, port = $7, password = $8, extra = $9,
          updated_at = clock_timestamp()
    where connection_id = $1
   returning ${COLUMNS}`,
);
const DELETE = statement("connection_delete", "delete from runner.connections where connection_id = $1 returning id");

const TEST_COLUMNS = "token, connection_id, state, result_message, created_at";
// a test whose runner stopped before it ended would hold its connection's one open test forever
const ABANDON_TESTS = statement(
  "connection_tests_abandon",
  `update runner.connection_tests
      set state = 'failed', result_message = 'abandoned: the runner that ran this test stopped before it ended'
    where connection_id = $1 and state not in ('success', 'failed') and created_at < clock_timestamp() - interval '10 minutes'`,
);
const PRUNE_TESTS = statement("connection_tests_prune", "delete from runner.connection_tests where created_at < clock_timestamp() - interval '1 day'");
const START_TEST = statement(
  "connection_test_start",
  `insert into runner.connection_tests (token, connection_id, state) values ($1, $2, 'running') returning ${TEST_COLUMNS}`,
);
const FINISH_TEST = statement(
  "connection_test_finish",
  `update runner.connection_tests set state = $2, result_message = $3 where token = $1 returning ${TEST_COLUMNS}`,
);
const GET_TEST = statement("connection_test_get", `select ${TEST_COLUMNS} from runner.connection_tests where token = $1`);

interface Row {
  connection_id: string;
  conn_type: string;
  description: string | null;
  host: string | null;
  login: string | null;
  schema: string | null;
  port: number | null;
  password: string | null;
  extra: string | null;
}

interface TestRow {
  token: string;
  connection_id: string;
  state: ConnectionTestState;
  result_message: string | null;
  created_at: Date;
}

const toRecord = (r: Row, readOnly = false): ConnectionRecord => ({
  connectionId: r.connection_id, connType: r.conn_type, description: r.description, host: r.host, login: r.login,
  schema: r.schema, port: r.port, password: r.password, extra: r.extra, readOnly,
});

const toTest = (r: TestRow): ConnectionTestRecord => ({
  token: r.token, connectionId: r.connection_id, state: r.state, resultMessage: r.result_message, createdAt: r.created_at,
});

const valuesOf = (c: ConnectionFields): unknown[] => [c.connectionId, c.connType, c.description, c.host, c.login, c.schema, c.port, c.password, c.extra];

export async function listConnections(db: Queryable, q: ConnectionListQuery): Promise<Page<ConnectionRecord>> {
  const w = new Where();
  const outside = q.alsoListed.map((c, i) => ({
    id: i - q.alsoListed.length, connection_id: c.connectionId, conn_type: c.connType, description: c.description,
    host: c.host, login: c.login, schema: c.schema, port: c.port, extra: c.extra,
  }));
  // their passwords stay in this process: a bind value may end up in the server's log
  const listed = `
    select s.id, s.connection_id, s.conn_type, s.description, s.host, s.login, s.schema, s.port, null::text as password, s.extra, true as read_only
      from jsonb_to_recordset(${w.param(JSON.stringify(outside))}::jsonb)
           as s(id bigint, connection_id text, conn_type text, description text, host text, login text, schema text, port integer, extra text)
    union all
    select c.id, c.connection_id, c.conn_type, c.description, c.host, c.login, c.schema, c.port, c.password, c.extra, false
      from runner.connections c
     where c.connection_id <> all(${w.param(outside.map((c) => c.connection_id))}::text[])`;
  w.pattern("l.connection_id", q.pattern).prefix("l.connection_id", q.prefix);
  const where = w.toString();
  const order = orderBy(q.orderBy, SORT_COLUMNS, "l.id", "l.id");
  const limit = w.param(q.limit);
  const offset = w.param(q.offset);
  const page = await db.query<Row & { read_only: boolean; total: string }>(
    `with listed as (${listed}) select l.*, count(*) over () as total from listed l where ${where} order by ${order} limit ${limit} offset ${offset}`,
    w.values,
  );
  const total = await pageTotal(db, page.rows, q.offset, `with listed as (${listed}) select count(*) as total from listed l where ${where}`, w.values.slice(0, -2));
  const passwords = new Map(q.alsoListed.map((c) => [c.connectionId, c.password]));
  const items = page.rows.map((row) => (row.read_only ? toRecord({ ...row, password: passwords.get(row.connection_id) ?? null }, true) : toRecord(row)));
  return { items, totalEntries: total };
}

export async function getConnection(db: Queryable, connectionId: string): Promise<ConnectionRecord> {
  const row = await queryOne<Row>(db, GET, [connectionId]);
  if (!row) throw new ConnectionNotFoundError(connectionId);
  return toRecord(row);
}

export async function createConnection(db: Queryable, c: ConnectionFields): Promise<ConnectionRecord> {
  try {
    const row = await queryOne<Row>(db, INSERT, valuesOf(c));
    if (!row) throw new Error(`insert of connection '${c.connectionId}' returned nothing`);
    return toRecord(row);
  } catch (err) {
    if (errorCode(err) === PG_ERROR.UNIQUE_VIOLATION) throw new ConnectionExistsError(c.connectionId);
    throw err;
  }
}

/** Replaces every field of the stored connection c.connectionId. */
export async function updateConnection(db: Queryable, c: ConnectionFields): Promise<ConnectionRecord> {
  const row = await queryOne<Row>(db, UPDATE, valuesOf(c));
  if (!row) throw new ConnectionNotFoundError(c.connectionId);
  return toRecord(row);
}

export async function deleteConnection(db: Queryable, connectionId: string): Promise<void> {
  const row = await queryOne(db, DELETE, [connectionId]);
  if (!row) throw new ConnectionNotFoundError(connectionId);
}

/** A test of connectionId begins (state running), under a new token; results older than a day go. */
export async function startConnectionTest(db: Queryable, connectionId: string): Promise<ConnectionTestRecord> {
  await query(db, PRUNE_TESTS, []);
  await query(db, ABANDON_TESTS, [connectionId]);
  const token = randomBytes(24).toString("base64url");
  try {
    const row = await queryOne<TestRow>(db, START_TEST, [token, connectionId]);
    if (!row) throw new Error(`insert of a connection test of '${connectionId}' returned nothing`);
    return toTest(row);
  } catch (err) {
    if (errorCode(err) === PG_ERROR.UNIQUE_VIOLATION && err instanceof pg.DatabaseError && err.constraint === "connection_tests_one_active") {
      throw new ConnectionTestActiveError(connectionId);
    }
    throw err;
  }
}

export async function finishConnectionTest(db: Queryable, token: string, outcome: { status: boolean; message: string }): Promise<ConnectionTestRecord> {
  const row = await queryOne<TestRow>(db, FINISH_TEST, [token, outcome.status ? "success" : "failed", outcome.message]);
  if (!row) throw new ConnectionTestNotFoundError();
  return toTest(row);
}

export async function getConnectionTest(db: Queryable, token: string): Promise<ConnectionTestRecord> {
  const row = await queryOne<TestRow>(db, GET_TEST, [token]);
  if (!row) throw new ConnectionTestNotFoundError();
  return toTest(row);
}

/** The connection methods of RunnerService over the engine's pool (postgres-service.ts spreads them in). */
export function connectionMethods(db: pg.Pool) {
  return {
    listConnections: (q: ConnectionListQuery) => listConnections(db, q),
    getConnection: (connectionId: string) => getConnection(db, connectionId),
    createConnection: (c: ConnectionFields) => createConnection(db, c),
    updateConnection: (c: ConnectionFields) => updateConnection(db, c),
    deleteConnection: (connectionId: string) => deleteConnection(db, connectionId),
    startConnectionTest: (connectionId: string) => startConnectionTest(db, connectionId),
    finishConnectionTest: (token: string, outcome: { status: boolean; message: string }) => finishConnectionTest(db, token, outcome),
    getConnectionTest: (token: string) => getConnectionTest(db, token),
  };
}
