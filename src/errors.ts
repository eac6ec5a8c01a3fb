// Anything thrown, as an Error: every room reads errors through these, never with a cast
// (`(err as Error)` is refused by eslint), and decides by a code, never by the message text.

/** A failure inside a named step (a DAG task, e.g. "createTopics"): the message starts with the step. */
export class StepError extends Error {
  // declared before name, so an error's own keys stay in the order step, name
  readonly step: string;
  override name = "StepError";

  constructor(step: string, message: string, options?: { cause?: unknown }) {
    super(`${step}: ${message}`, options);
    this.step = step;
  }
}

/** Turns anything thrown into an Error, keeping the original as `cause`. */
export function coerceError(value: unknown): Error {
  if (value instanceof Error) return value;
  if (typeof value === "string") return new Error(value);
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    // a value JSON cannot write (a cycle, a BigInt): its String() form
    text = String(value);
  }
  return new Error(`non-error thrown: ${text}`, { cause: value });
}

/** What went wrong, in words, for a log line or a message to a person (never to decide on). */
export function errorMessage(value: unknown): string {
  return coerceError(value).message;
}

/** What a failed child process (execFile) printed, carried on its error; empty strings when absent. */
export function childOutput(value: unknown): { stderr: string; stdout: string } {
  const field = (name: "stderr" | "stdout"): string => {
    if (typeof value !== "object" || value === null || !(name in value)) return "";
    const text: unknown = (value as Record<string, unknown>)[name];
    return typeof text === "string" || Buffer.isBuffer(text) ? text.toString() : "";
  };
  return { stderr: field("stderr"), stdout: field("stdout") };
}

/** The exit code a failed child process (execFile) carries on its error; -1 when it has none (killed, not started). */
export function childExitCode(value: unknown): number {
  if (typeof value !== "object" || value === null || !("code" in value)) return -1;
  const code: unknown = value.code;
  return typeof code === "number" ? code : -1;
}

/**
 * The string `code` an error carries, or undefined: a Node system call's (ENOENT, EADDRINUSE, …),
 * Postgres's SQLSTATE through pg (23505, 57P01, …), a ClickHouse client's server code ("60"). The one
 * way any room reads a code (eslint refuses `as { code … }`); decide on it, never on the message.
 */
export function errorCode(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || !("code" in value)) return undefined;
  const code: unknown = value.code;
  return typeof code === "string" ? code : undefined;
}

/** The `cause` an error carries (an Error's, or any object's), or undefined. */
export function errorCause(value: unknown): unknown {
  if (typeof value !== "object" || value === null || !("cause" in value)) return undefined;
  return value.cause;
}
