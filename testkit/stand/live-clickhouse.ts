// A database of our own on the test stand's ch1 (admin), for the loader's live tests: created with a
// random loader_test_ name, dropped after. Never a world database (stg ods dds dm dic).
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from "@clickhouse/client";
import { clickhouseNodeConfig, quoteIdentifier } from "../../src/clickhouse/index.ts";
import { clickhouseHttpUrl, loadStandConfig } from "../../src/config/index.ts";
import { randomName } from "./live-stand.ts";

export interface LiveDatabase {
  client: ClickHouseClient;
  database: string;
  query<T>(sql: string): Promise<T[]>;
  drop(): Promise<void>;
}

export function loaderClickHouseClient(): ClickHouseClient {
  const config = loadStandConfig();
  const node = clickhouseNodeConfig("ch1", config);
  const { user, password } = config.clickhouse.accounts.admin;
  return createClient({
    url: clickhouseHttpUrl(node, config),
    username: user,
    password,
    request_timeout: 30_000,
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
  });
}

export async function createLiveDatabase(): Promise<LiveDatabase> {
  const client = loaderClickHouseClient();
  const database = randomName("loader_test");
  await client.command({ query: `CREATE DATABASE ${quoteIdentifier(database)}` });
  return {
    client,
    database,
    query: async <T>(sql: string) => (await client.query({ query: sql, format: "JSONEachRow" })).json<T>(),
    drop: async () => {
      await client.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(database)}` });
      await client.close();
    },
  };
}
