// ClickHouse connections per node and per account, over @clickhouse/client (HTTP).
// Every failure is rethrown through wrapClickHouseError, so it names account, node and statement.
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from "@clickhouse/client";
import { loadStandConfig, type ClickHouseNodeConfig, type StandConfig } from "../config/index.ts";
import { wrapClickHouseError, type StatementTarget } from "./errors.ts";

/** The stand's accounts (stand.yaml clickhouse.accounts) plus `default`, which serves health checks only. */
export type AccountKey = keyof StandConfig["clickhouse"]["accounts"] | "default";

export interface ConnectOptions {
  /** Node name from stand.yaml (ch1, ch2); the first node when omitted. */
  node?: string;
  account?: AccountKey;
  requestTimeoutMs?: number;
  config?: StandConfig;
}

export function clickhouseNodeConfig(name: string | undefined, config: StandConfig = loadStandConfig()): ClickHouseNodeConfig {
  const nodes = config.clickhouse.nodes;
  const node = name === undefined ? nodes[0] : nodes.find((n) => n.name === name);
  if (!node) throw new Error(`no ClickHouse node '${name}' in stand config (nodes: ${nodes.map((n) => n.name).join(", ")})`);
  return node;
}

function credentials(account: AccountKey, config: StandConfig): { user: string; password: string } {
  return account === "default" ? { user: "default", password: "" } : config.clickhouse.accounts[account];
}

/** Per-statement server settings, sent as URL parameters (18.16 has no SETTINGS clause on INSERT). */
export type Settings = ClickHouseSettings;

/** One account's connection to one node. Statements are plain SQL text (see sql.ts for quoting). */
export class StandClickHouse {
  readonly target: StatementTarget;

  constructor(
    private readonly client: ClickHouseClient,
    target: StatementTarget,
  ) {
    this.target = target;
  }

  /** Runs a SELECT and returns its rows as objects (JSONEachRow; 64-bit integers arrive as strings). */
  async query<Row = Record<string, unknown>>(sql: string, settings?: Settings): Promise<Row[]> {
    try {
      const result = await this.client.query({ query: sql, format: "JSONEachRow", clickhouse_settings: settings });
      return await result.json<Row>();
    } catch (err) {
      throw wrapClickHouseError(err, this.target, sql);
    }
  }

  /** Runs a statement that returns no rows: DDL, INSERT … SELECT, SYSTEM, OPTIMIZE. */
  async command(sql: string, settings?: Settings): Promise<void> {
    try {
      await this.client.command({ query: sql, clickhouse_settings: settings });
    } catch (err) {
      throw wrapClickHouseError(err, this.target, sql);
    }
  }

  /** Inserts rows as JSONEachRow into `table` (already quoted/qualified by the caller). */
  async insert(table: string, rows: readonly object[], settings?: Settings): Promise<void> {
    try {
      await this.client.insert({ table, values: rows as object[], format: "JSONEachRow", clickhouse_settings: settings });
    } catch (err) {
      throw wrapClickHouseError(err, this.target, `INSERT INTO ${table} FORMAT JSONEachRow (${rows.length} rows)`);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

/** The @clickhouse/client of one account on one node, for callers that send their own bodies (the loader). */
export function createNodeClient(options: ConnectOptions = {}): { client: ClickHouseClient; target: StatementTarget } {
  const config = options.config ?? loadStandConfig();
  const node = clickhouseNodeConfig(options.node, config);
  const account = options.account ?? "admin";
  const { user, password } = credentials(account, config);
  const client = createClient({
    url: `http://${config.bind_host}:${node.http_port}`,
    username: user,
    password,
    request_timeout: options.requestTimeoutMs ?? 60_000,
    // 18.16 predates several settings newer clients send by default; send none we do not choose
    compression: { request: false, response: false },
    // failures reach the caller as wrapped errors; the client's own console logging would only duplicate them
    log: { level: ClickHouseLogLevel.OFF },
  });
  return { client, target: { account, user, node: node.name } };
}

export function connectClickHouse(options: ConnectOptions = {}): StandClickHouse {
  const { client, target } = createNodeClient(options);
  return new StandClickHouse(client, target);
}
