// Transient versus permanent faults of the world's services, by code, never by message text: a
// ClickHouse server error code, a Postgres SQLSTATE, a kafkajs error's own `retriable` flag, a
// socket error code. World DAGs pass isTransientFault to the runner (DagOptions.isRetryable): a
// transient fault is retried with the task's jittered backoff, a permanent one fails at once.
import { ClickHouseStatementError, CH_ERROR, clickhouseServerCode } from "../clickhouse/index.ts";
import { errorCause, errorCode } from "../errors.ts";

/** ClickHouse codes that a later try can outlive: a replica in readonly mode (its ZooKeeper session
 * was lost or is being restored), ZooKeeper trouble, timeouts, network errors, overload. */
export const TRANSIENT_CLICKHOUSE_CODES: ReadonlySet<number> = new Set([
  3, // UNEXPECTED_END_OF_FILE: the connection broke mid-answer
  CH_ERROR.TIMEOUT_EXCEEDED, // 159
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  CH_ERROR.NO_ZOOKEEPER, // 225
  CH_ERROR.TABLE_IS_READ_ONLY, // 242
  252, // TOO_MANY_PARTS
  319, // UNKNOWN_STATUS_OF_INSERT
  CH_ERROR.UNKNOWN_STATUS_OF_DISTRIBUTED_DDL_TASK, // 379
  999, // KEEPER_EXCEPTION
]);

/** Socket-level failures: the service was not there or went away; it may be back. */
const TRANSIENT_SOCKET_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT",
]);

/** Postgres: connection exceptions (class 08), admin shutdown / crash / cannot connect now (57P0x). */
function transientPgCode(code: string): boolean {
  return code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "40001" || code === "40P01";
}

interface KafkaLike {
  name: string;
  retriable?: unknown;
  cause?: unknown;
}

function isKafkaError(err: unknown): err is KafkaLike {
  return err instanceof Error && err.name.startsWith("KafkaJS");
}

/** The error and every `cause` below it (kafkajs nests the last retriable error in its "retries exceeded"). */
function chain(err: unknown): unknown[] {
  const seen: unknown[] = [];
  let current: unknown = err;
  while (current !== undefined && current !== null && seen.length < 10 && !seen.includes(current)) {
    seen.push(current);
    current = errorCause(current);
  }
  return seen;
}

/** unknown: nothing in the chain names a code (our own checks: a count that never settled, a wait that timed out). */
export type FaultClass = "transient" | "permanent" | "unknown";

/** Transient when any error in the cause chain is; a server code that is not transient is permanent. */
export function classifyFault(err: unknown): FaultClass {
  for (const e of chain(err)) {
    // a ClickHouse server's code (18.16 gives it only inside its text, which src/clickhouse/errors.ts reads)
    const chCode = e instanceof ClickHouseStatementError ? e.code : clickhouseServerCode(e);
    if (chCode !== undefined) return TRANSIENT_CLICKHOUSE_CODES.has(chCode) ? "transient" : "permanent";
    if (isKafkaError(e)) {
      if (e.retriable === true) return "transient";
      if (e.name === "KafkaJSNumberOfRetriesExceeded" || e.name === "KafkaJSConnectionError" || e.name === "KafkaJSRequestTimeoutError") {
        return "transient";
      }
    }
    const code = errorCode(e);
    if (code !== undefined && TRANSIENT_SOCKET_CODES.has(code)) return "transient";
    // a SQLSTATE: five digits or capitals with at least one digit (socket codes like EPIPE have none)
    if (code !== undefined && /^(?=.*\d)[0-9A-Z]{5}$/.test(code)) return transientPgCode(code) ? "transient" : "permanent";
  }
  return "unknown";
}

/** For DagOptions.isRetryable: transient and unknown faults are worth another try (the tasks throw
 * NonRetryableError themselves for what they know is final); permanent ones are not. */
export function isTransientFault(err: Error): boolean {
  return classifyFault(err) !== "permanent";
}
