// Transient versus permanent faults (src/world/faults.ts), from real errors of the real services
// where this machine can make them (a syntax error, an unknown table, a refusal, a closed port for
// ClickHouse, Kafka and Postgres), and from the server code alone where it cannot (a replica in
// readonly mode, 242; ZooKeeper session loss, 999).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { connectClickHouse } from "../../src/clickhouse/client.ts";
import { ClickHouseStatementError } from "../../src/clickhouse/errors.ts";
import { loadStandConfig, postgresUrl, type StandConfig } from "../../src/config/stand.ts";
import { classifyFault } from "../../src/world/faults.ts";

const CLOSED_PORT = 1; // tcpmux: nothing listens on it here

async function errorOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail");
}

async function clickhouseError(sql: string, account: "admin" | "reader" = "admin", config: StandConfig = loadStandConfig()): Promise<unknown> {
  const ch = connectClickHouse({ account, config, requestTimeoutMs: 5000 });
  try {
    return await errorOf(() => ch.query(sql));
  } finally {
    await ch.close();
  }
}

describe("transient versus permanent faults", () => {
  it("ClickHouse: syntax, unknown table and a refusal are permanent; a closed port is transient", async () => {
    assert.equal(classifyFault(await clickhouseError("SELEC 1")), "permanent");
    assert.equal(classifyFault(await clickhouseError("SELECT * FROM no_such_db.no_such_table")), "permanent");
    assert.equal(classifyFault(await clickhouseError("CREATE DATABASE fault_probe_refused", "reader")), "permanent");
    const config = loadStandConfig();
    const closed = { ...config, clickhouse: { ...config.clickhouse, nodes: config.clickhouse.nodes.map((n) => ({ ...n, http_port: CLOSED_PORT })) } };
    assert.equal(classifyFault(await clickhouseError("SELECT 1", "admin", closed)), "transient");
  });

  it("ClickHouse by code: readonly replica, ZooKeeper, timeouts are transient; the message text is never read", () => {
    const target = { account: "etl", user: "etl", node: "ch2" };
    const withCode = (code: number, text: string) => new ClickHouseStatementError(text, target, "INSERT …", code, text);
    assert.equal(classifyFault(withCode(242, "Table is in readonly mode")), "transient");
    assert.equal(classifyFault(withCode(999, "Session expired")), "transient");
    assert.equal(classifyFault(withCode(159, "Timeout exceeded")), "transient");
    // the same words under a permanent code stay permanent
    assert.equal(classifyFault(withCode(62, "Table is in readonly mode")), "permanent");
  });

  it("Kafka: a broker that is not there is transient", async () => {
    const kafka = new Kafka({ clientId: "fault-probe", brokers: [`127.0.0.1:${CLOSED_PORT}`], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 500 });
    const admin = kafka.admin();
    const err = await errorOf(() => admin.connect());
    assert.equal(classifyFault(err), "transient", String(err));
  });

  it("Postgres: a syntax error is permanent, a refused connection transient", async () => {
    const config = loadStandConfig();
    const client = new pg.Client({ connectionString: postgresUrl(config.postgres.database, config) });
    await client.connect();
    try {
      assert.equal(classifyFault(await errorOf(() => client.query("selec 1"))), "permanent");
    } finally {
      await client.end();
    }
    const closed = new pg.Client({ connectionString: postgresUrl(config.postgres.database, { ...config, postgres: { ...config.postgres, port: CLOSED_PORT } }) });
    assert.equal(classifyFault(await errorOf(() => closed.connect())), "transient");
  });
});
