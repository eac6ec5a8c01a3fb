// ClickHouse errors the stand and the runner classify, by server error code (never by message text),
// and the wrapper that makes every refusal name the account, the node and the statement.
// 18.16 does not print the user in most refusals ("Cannot drop table. DDL queries are prohibited
// for the user"), so the account name comes from us.
import { ClickHouseError } from "@clickhouse/client";
import { errorCode } from "../errors.ts";

/** Server error codes (ClickHouse src/Common/ErrorCodes.cpp; stable across versions). */
export const CH_ERROR = Object.freeze({
  UNKNOWN_TABLE: 60,
  SYNTAX_ERROR: 62,
  UNKNOWN_FORMAT: 73,
  UNKNOWN_DATABASE: 81,
  DATABASE_ALREADY_EXISTS: 82,
  TABLE_ALREADY_EXISTS: 57,
  UNKNOWN_FUNCTION: 46,
  UNKNOWN_SETTING: 115,
  TIMEOUT_EXCEEDED: 159,
  READONLY: 164,
  UNKNOWN_USER: 192,
  WRONG_PASSWORD: 193,
  REQUIRED_PASSWORD: 194,
  IP_ADDRESS_NOT_ALLOWED: 195,
  NO_ZOOKEEPER: 225,
  TABLE_IS_READ_ONLY: 242,
  DATABASE_ACCESS_DENIED: 291,
  UNKNOWN_STATUS_OF_DISTRIBUTED_DDL_TASK: 379,
  QUERY_IS_PROHIBITED: 392,
  /** Modern servers (20.x+) refuse through the SQL access model with this code. */
  ACCESS_DENIED: 497,
  AUTHENTICATION_FAILED: 516,
});

/** Codes meaning "this account may not do that" rather than "the statement is wrong". */
export const REFUSAL_CODES: ReadonlySet<number> = new Set([
  CH_ERROR.READONLY,
  CH_ERROR.DATABASE_ACCESS_DENIED,
  CH_ERROR.QUERY_IS_PROHIBITED,
  CH_ERROR.ACCESS_DENIED,
  CH_ERROR.UNKNOWN_USER,
  CH_ERROR.WRONG_PASSWORD,
  CH_ERROR.REQUIRED_PASSWORD,
  CH_ERROR.IP_ADDRESS_NOT_ALLOWED,
  CH_ERROR.AUTHENTICATION_FAILED,
]);

export interface StatementTarget {
  /** The stand account key (admin, lifecycle, etl, reader, default). */
  account: string;
  /** The ClickHouse user name the account logs in as. */
  user: string;
  node: string;
}

/** A statement ClickHouse answered with an error; `code` is the server's error code when it gave one. */
export class ClickHouseStatementError extends Error {
  constructor(
    message: string,
    readonly target: StatementTarget,
    readonly statement: string,
    readonly code: number | undefined,
    readonly serverText: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server refused the account (permissions, readonly, allow-list, login). */
export class ClickHouseRefusedError extends ClickHouseStatementError {}

/** The server's error code in a 18.16 ("Code: 291, e.displayText() = …") or modern ("Code: 497. DB::Exception") text. */
export function clickhouseErrorCode(err: unknown): number | undefined {
  const fromField = errorCode(err);
  if (fromField !== undefined && /^\d+$/.test(fromField)) return Number(fromField);
  return codeInServerText(err instanceof Error ? err.message : String(err));
}

/** The "Code: N" a ClickHouse server writes in its error text (all 18.16 gives), or undefined. */
function codeInServerText(message: string): number | undefined {
  const match = /Code: (\d+)/.exec(message);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/**
 * The code of an error a ClickHouse server answered, or undefined for any other error: the
 * client's error (its numeric `code`) or a server message ("Code: N", all 18.16 says). Unlike
 * clickhouseErrorCode it never takes another library's `code` (a Postgres SQLSTATE can be digits).
 * The one place that reads a server's text, because 18.16 puts its code nowhere else.
 */
export function clickhouseServerCode(err: unknown): number | undefined {
  if (!(err instanceof Error)) return undefined;
  if (err instanceof ClickHouseError) return clickhouseErrorCode(err);
  return codeInServerText(err.message);
}

/** The server's words without the 18.16 decoration (", e.what() = DB::Exception" and the stack). */
function serverText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/, e\.what\(\) = DB::Exception\s*$/s, "").trim();
}

function shortStatement(statement: string): string {
  const oneLine = statement.replace(/\s+/g, " ").trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
}

/** Wraps anything thrown by a ClickHouse call into an error that names account, node and statement. */
export function wrapClickHouseError(err: unknown, target: StatementTarget, statement: string): Error {
  if (err instanceof ClickHouseStatementError) return err;
  const code = clickhouseErrorCode(err);
  const text = serverText(err);
  const where = `user '${target.user}' (account ${target.account}) on node ${target.node}`;
  if (code !== undefined && REFUSAL_CODES.has(code)) {
    return new ClickHouseRefusedError(
      `ClickHouse refused ${where}: ${text} [statement: ${shortStatement(statement)}]`,
      target, statement, code, text, { cause: err },
    );
  }
  return new ClickHouseStatementError(
    `ClickHouse error for ${where}: ${text} [statement: ${shortStatement(statement)}]`,
    target, statement, code, text, { cause: err },
  );
}
