// How the stand's runner tests a connection (POST /api/v2/connections/test, when
// runner.api.test_connection is enabled): Airflow's Connection.test_connection() without the
// providers, a real round trip per type, each bounded by seconds. postgres connects and runs select
// 1; clickhouse answers GET /ping, then SELECT 1 as the login; kafka describes its cluster; any
// other type is a TCP connect to host:port. Nothing of the runner's own (environment, .pgpass) is
// lent to a test: only the connection's fields are used.
import net from "node:net";
import pg from "pg";
import { Kafka, logLevel, type SASLOptions } from "kafkajs";
import { errorCause, errorCode, errorMessage } from "../errors.ts";
import type { ConnectionFields } from "../runner/index.ts";

export interface TestOutcome {
  status: boolean;
  message: string;
}

const STEP_TIMEOUT_MS = 5000;
const DEFAULT_PORTS: Record<string, number> = { postgres: 5432, clickhouse: 8123, kafka: 9092 };

const failed = (message: string): TestOutcome => ({ status: false, message });

/** An error in words: Node's AggregateError (every address of a name refused) has a code and no
 * message, and fetch's "fetch failed" says what failed in its cause. */
function describe(err: unknown, depth = 0): string {
  const message = errorMessage(err);
  const code = errorCode(err);
  const own = code === undefined || message.includes(code) ? message : `${code}${message === "" ? "" : `: ${message}`}`;
  const cause = errorCause(err);
  return cause !== undefined && depth < 3 ? `${own} (${describe(cause, depth + 1)})` : own;
}

function extraOf(c: ConnectionFields): Record<string, unknown> {
  if (c.extra === null) return {};
  try {
    const parsed: unknown = JSON.parse(c.extra);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const hostPort = (host: string, port: number) => `${host.includes(":") ? `[${host}]` : host}:${port}`;

async function testPostgres(c: ConnectionFields, host: string, port: number, signal: AbortSignal): Promise<TestOutcome> {
  if (c.login === null) return failed("a postgres connection needs a login (the runner lends none of its own)");
  const client = new pg.Client({
    host,
    port,
    user: c.login,
    // a function, so pg never falls back to PGPASSWORD or ~/.pgpass of the runner's process
    password: () => c.password ?? "",
    database: c.schema ?? c.login,
    connectionTimeoutMillis: STEP_TIMEOUT_MS,
    query_timeout: STEP_TIMEOUT_MS,
    application_name: "connection-test",
  });
  client.on("error", () => undefined); // a drop after the test is not the test's
  const stop = () => void client.end().catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  const started = Date.now();
  try {
    await client.connect();
    await client.query("select 1");
    return { status: true, message: `Connection successfully tested: Postgres at ${hostPort(host, port)}, database ${c.schema ?? c.login}, as ${c.login}` };
  } catch (err) {
    // pg reports its own connect timeout as a terminated connection
    const late = Date.now() - started >= STEP_TIMEOUT_MS ? `no answer within ${STEP_TIMEOUT_MS / 1000} s: ` : "";
    return failed(`Postgres at ${hostPort(host, port)}: ${late}${describe(err)}`);
  } finally {
    signal.removeEventListener("abort", stop);
    await client.end().catch(() => undefined);
  }
}

async function testClickHouse(c: ConnectionFields, host: string, port: number, signal: AbortSignal): Promise<TestOutcome> {
  const base = `${extraOf(c).protocol === "https" ? "https" : "http"}://${hostPort(host, port)}`;
  const within = () => AbortSignal.any([signal, AbortSignal.timeout(STEP_TIMEOUT_MS)]);
  try {
    const ping = await fetch(`${base}/ping`, { signal: within() });
    if (!ping.ok) return failed(`ClickHouse at ${base}: GET /ping answered ${ping.status}`);
    await ping.body?.cancel();
    if (c.login === null) return { status: true, message: `Connection successfully tested: ClickHouse at ${base} answered /ping (no login to try a query with)` };
    const select = await fetch(`${base}/?query=${encodeURIComponent("SELECT 1")}`, {
      headers: { "X-ClickHouse-User": c.login, "X-ClickHouse-Key": c.password ?? "" },
      signal: within(),
    });
    const text = (await select.text()).trim();
    if (!select.ok) return failed(`ClickHouse at ${base} as ${c.login}: SELECT 1 answered ${select.status}: ${text.slice(0, 300)}`);
    return { status: true, message: `Connection successfully tested: ClickHouse at ${base} answered /ping and SELECT 1 as ${c.login}` };
  } catch (err) {
    return failed(`ClickHouse at ${base}: ${describe(err)}`);
  }
}

/** SASL as the Kafka provider's extra names it (security.protocol, sasl.mechanism), the login and password by default. */
function kafkaSasl(c: ConnectionFields, extra: Record<string, unknown>): SASLOptions | undefined {
  const protocol = typeof extra["security.protocol"] === "string" ? extra["security.protocol"].toUpperCase() : "";
  if (!protocol.startsWith("SASL")) return undefined;
  const mechanism = typeof extra["sasl.mechanism"] === "string" ? extra["sasl.mechanism"].toLowerCase() : "plain";
  const username = typeof extra["sasl.username"] === "string" ? extra["sasl.username"] : (c.login ?? "");
  const password = typeof extra["sasl.password"] === "string" ? extra["sasl.password"] : (c.password ?? "");
  if (mechanism === "scram-sha-256" || mechanism === "scram-sha-512") return { mechanism, username, password };
  return { mechanism: "plain", username, password };
}

async function testKafka(c: ConnectionFields, signal: AbortSignal): Promise<TestOutcome> {
  const extra = extraOf(c);
  const bootstrap = typeof extra["bootstrap.servers"] === "string" ? extra["bootstrap.servers"] : "";
  const brokers = bootstrap.split(",").map((b) => b.trim()).filter(Boolean);
  if (brokers.length === 0 && c.host !== null) brokers.push(hostPort(c.host, c.port ?? DEFAULT_PORTS.kafka ?? 9092));
  if (brokers.length === 0) return failed("a kafka connection needs extra.bootstrap.servers or a host");
  const protocol = typeof extra["security.protocol"] === "string" ? extra["security.protocol"].toUpperCase() : "";
  const kafka = new Kafka({
    clientId: "connection-test",
    brokers,
    ssl: protocol.endsWith("SSL"),
    sasl: kafkaSasl(c, extra),
    connectionTimeout: 3000,
    requestTimeout: STEP_TIMEOUT_MS,
    retry: { retries: 0 },
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  const stop = () => void admin.disconnect().catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return { status: true, message: `Connection successfully tested: Kafka cluster ${cluster.clusterId} at ${brokers.join(",")}, ${cluster.brokers.length} broker(s)` };
  } catch (err) {
    return failed(`Kafka at ${brokers.join(",")}: ${describe(err)}`);
  } finally {
    signal.removeEventListener("abort", stop);
    await admin.disconnect().catch(() => undefined);
  }
}

function testTcp(c: ConnectionFields, host: string, port: number, signal: AbortSignal): Promise<TestOutcome> {
  const where = hostPort(host, port);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const end = (outcome: TestOutcome) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", abort);
      socket.destroy();
      resolve(outcome);
    };
    const abort = () => end(failed(`${where}: the test was stopped`));
    const timer = setTimeout(() => end(failed(`${where}: no TCP connection within ${STEP_TIMEOUT_MS / 1000} s`)), STEP_TIMEOUT_MS);
    signal.addEventListener("abort", abort, { once: true });
    socket.once("connect", () => end({ status: true, message: `Connection successfully tested: ${where} accepts TCP connections (a ${c.connType} connection is not tested further here)` }));
    socket.once("error", (err) => end(failed(`${where}: ${describe(err)}`)));
  });
}

/** The stand's ConnectionTester (src/api's ConnectionTester). */
export async function testConnection(c: ConnectionFields, signal: AbortSignal): Promise<TestOutcome> {
  const type = c.connType.toLowerCase();
  if (type === "kafka") return testKafka(c, signal);
  if (c.host === null || c.host === "") return failed(`a ${c.connType} connection needs a host to test`);
  const kind = type === "postgresql" ? "postgres" : type;
  const port = c.port ?? DEFAULT_PORTS[kind];
  if (port === undefined) return failed(`a ${c.connType} connection needs a port to test (only a TCP connect is tried for this type)`);
  if (kind === "postgres") return testPostgres(c, c.host, port, signal);
  if (kind === "clickhouse") return testClickHouse(c, c.host, port, signal);
  return testTcp(c, c.host, port, signal);
}
