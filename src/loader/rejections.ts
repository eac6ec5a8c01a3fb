// An INSERT's failure, classified by the server's exception code and never by the words of its
// message: a transient fault (the rows are fine, the sink is not: hold and retry), a data rejection
// (something in the rows: salvage them), a schema fault (the table or a column is not what the
// rows need: hold, an operator must act). The transient codes are the world's (src/world/faults.ts);
// socket and client errors without a server code go through the same module's classifyFault.
import { CH_ERROR, REFUSAL_CODES, clickhouseErrorCode } from "../clickhouse/index.ts";
import { TRANSIENT_CLICKHOUSE_CODES, classifyFault } from "../world/index.ts";
import { errorCause, errorCode } from "../errors.ts";

/** Codes that are transient for a loader on top of the world's: the server may have room later. */
const LOADER_TRANSIENT_CODES: ReadonlySet<number> = new Set([
  173, // CANNOT_ALLOCATE_MEMORY
  241, // MEMORY_LIMIT_EXCEEDED
  236, // ABORTED
  394, // QUERY_WAS_CANCELLED
]);

/** Codes that mean "these rows' values", with the reason a dead letter carries (ErrorCodes.cpp names). */
export const DATA_REJECTION_REASONS: ReadonlyMap<number, string> = new Map([
  [6, "cannot_parse_text"],
  [25, "cannot_parse_escape_sequence"],
  [26, "cannot_parse_quoted_string"],
  [27, "cannot_parse_input_assertion_failed"],
  [32, "attempt_to_read_after_eof"],
  [33, "cannot_read_all_data"],
  [38, "cannot_parse_date"],
  [41, "cannot_parse_datetime"],
  [53, "type_mismatch"],
  [69, "argument_out_of_bound"],
  [70, "cannot_convert_type"],
  [72, "cannot_parse_number"],
  [117, "incorrect_data"],
  [130, "cannot_read_array_from_text"],
  [131, "too_large_string_size"],
  [190, "sizes_of_arrays_doesnt_match"],
  [349, "cannot_insert_null_in_ordinary_column"],
  [377, "cannot_parse_uuid"],
  [470, "value_is_out_of_range_of_data_type"],
]);

/**
 * Codes that mean the statement cannot work for any rows: the table, a column, the format, or the
 * account (the stand's refusal codes, errors.ts). IP_ADDRESS_NOT_ALLOWED is left out: an
 * allow-list refusal stays "unknown" (held and retried like a transient fault, the sink reported
 * down), as the loader has always had it.
 */
const SCHEMA_CODES: ReadonlySet<number> = new Set([
  8, // THERE_IS_NO_COLUMN
  16, // NO_SUCH_COLUMN_IN_TABLE
  47, // UNKNOWN_IDENTIFIER
  CH_ERROR.UNKNOWN_TABLE,
  CH_ERROR.SYNTAX_ERROR,
  CH_ERROR.UNKNOWN_FORMAT,
  CH_ERROR.UNKNOWN_DATABASE,
  CH_ERROR.UNKNOWN_SETTING,
  ...[...REFUSAL_CODES].filter((code) => code !== CH_ERROR.IP_ADDRESS_NOT_ALLOWED),
]);

export type RejectionKind = "transient" | "data" | "schema" | "unknown";

export interface Rejection {
  kind: RejectionKind;
  /** The server's exception code, when it gave one. */
  code: number | undefined;
  /** A stable reason: the code's name for data rejections, else `transient_<code>`, `schema_<code>`, a socket code or `unknown`. */
  reason: string;
  /** The error's text, capped (the client reads a whole error body into memory; we keep a slice). */
  text: string;
}

function capText(text: string, capBytes: number): string {
  const bytes = Buffer.from(text, "utf8");
  return bytes.length <= capBytes ? text : `${bytes.subarray(0, capBytes).toString("utf8")}…`;
}

function socketCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === "object" && depth < 5; depth++) {
    const code = errorCode(e);
    if (code !== undefined && /^[A-Z_]+$/.test(code)) return code;
    e = errorCause(e);
  }
  return undefined;
}

/** Classifies one failed INSERT. An error with no server code is "unknown" unless faults.ts knows it
 * as transient; the loader treats unknown like transient (hold and retry), never as the rows' fault. */
export function classifyRejection(err: unknown, textCapBytes = 4096): Rejection {
  const text = capText(err instanceof Error ? err.message : String(err), textCapBytes);
  const code = clickhouseErrorCode(err) ?? clickhouseErrorCode(errorCause(err));
  if (code !== undefined) {
    const dataReason = DATA_REJECTION_REASONS.get(code);
    if (dataReason !== undefined) return { kind: "data", code, reason: dataReason, text };
    if (TRANSIENT_CLICKHOUSE_CODES.has(code) || LOADER_TRANSIENT_CODES.has(code)) return { kind: "transient", code, reason: `transient_${code}`, text };
    if (SCHEMA_CODES.has(code)) return { kind: "schema", code, reason: `schema_${code}`, text };
    return { kind: "unknown", code, reason: `unknown_${code}`, text };
  }
  if (err instanceof Error && classifyFault(err) === "transient") {
    return { kind: "transient", code: undefined, reason: socketCode(err)?.toLowerCase() ?? "transient", text };
  }
  return { kind: "unknown", code: undefined, reason: "unknown", text };
}

/** Socket codes of a connection that broke while the INSERT was in flight (the request was sent, no
 * answer came): what a server that dies mid-INSERT leaves. ECONNREFUSED is not one: the node was
 * down before the INSERT. */
const CONNECTION_LOST_REASONS: ReadonlySet<string> = new Set(["econnreset", "epipe", "econnaborted", "und_err_socket"]);

/** Whether a failed INSERT lost its connection mid-flight (no server code, a broken socket). */
export function lostConnection(rejection: Rejection): boolean {
  return rejection.code === undefined && CONNECTION_LOST_REASONS.has(rejection.reason);
}

/** The rejection of a row whose INSERT, alone, lost the connection and left the node not answering. */
export function killsServerRejection(node: string, text: string): Rejection {
  return { kind: "data", code: undefined, reason: "kills_server", text: `alone in its INSERT, the row left ${node} not answering (connection lost: ${text})` };
}
