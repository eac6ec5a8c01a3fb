// The two byte streams the Docker Engine API answers with, turned into lines: a build's progress
// (one JSON object per line: {"stream"}, {"status"}, {"aux"}, or {"error","errorDetail"}), and a
// container's logs, multiplexed into frames of [stream type, 0, 0, 0, big-endian length, payload]
// when the container has no TTY.
import type { Readable } from "node:stream";

export type BuildEvent =
  | { kind: "output"; text: string }
  | { kind: "image"; id: string }
  | { kind: "error"; message: string; line: string };

/** Parses one line of a build stream; unknown shapes become plain output, never a failure. */
export function parseBuildLine(line: string): BuildEvent | undefined {
  const trimmed = line.trim();
  if (trimmed === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    // a line of the stream that is not JSON is plain output
    return { kind: "output", text: trimmed };
  }
  const record = (parsed ?? {}) as { stream?: unknown; status?: unknown; error?: unknown; errorDetail?: { message?: unknown }; aux?: { ID?: unknown } };
  if (typeof record.error === "string" || record.errorDetail !== undefined) {
    const detail = record.errorDetail?.message;
    const message = typeof record.error === "string" ? record.error : typeof detail === "string" ? detail : "unknown build error";
    return { kind: "error", message, line: trimmed };
  }
  if (typeof record.aux?.ID === "string") return { kind: "image", id: record.aux.ID };
  const text = typeof record.stream === "string" ? record.stream : typeof record.status === "string" ? record.status : trimmed;
  return text.trim() === "" ? undefined : { kind: "output", text: text.trimEnd() };
}

/** Reads a build stream to its end, passing each event on; resolves with every event seen. */
export async function readBuildStream(stream: Readable, onEvent: (event: BuildEvent) => void): Promise<BuildEvent[]> {
  const events: BuildEvent[] = [];
  let pending = "";
  for await (const chunk of stream) {
    pending += typeof chunk === "string" ? chunk : (chunk as Buffer).toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) record(line);
  }
  record(pending);
  return events;

  function record(line: string): void {
    const event = parseBuildLine(line);
    if (!event) return;
    events.push(event);
    onEvent(event);
  }
}

export type LogStreamName = "stdout" | "stderr";

/**
 * Splits a multiplexed log stream into lines per stream. Bytes are buffered until a whole frame
 * and a whole line are there, so frames and lines may be cut anywhere by the transport.
 */
export async function readMultiplexedLogs(stream: Readable, onLine: (name: LogStreamName, line: string) => void): Promise<void> {
  let buffer = Buffer.alloc(0);
  const partial: Record<LogStreamName, string> = { stdout: "", stderr: "" };
  const emit = (name: LogStreamName, text: string): void => {
    const lines = (partial[name] + text).split("\n");
    partial[name] = lines.pop() ?? "";
    for (const line of lines) onLine(name, line);
  };
  for await (const chunk of stream) {
    buffer = Buffer.concat([buffer, typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer)]);
    while (buffer.length >= 8) {
      const size = buffer.readUInt32BE(4);
      if (buffer.length < 8 + size) break;
      const name: LogStreamName = buffer[0] === 2 ? "stderr" : "stdout";
      emit(name, buffer.subarray(8, 8 + size).toString("utf8"));
      buffer = buffer.subarray(8 + size);
    }
  }
  for (const name of ["stdout", "stderr"] as const) if (partial[name] !== "") onLine(name, partial[name]);
}

/** Builds one multiplexed frame (tests and recordings use it to write what the engine sends). */
export function multiplexedFrame(name: LogStreamName, text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  const header = Buffer.alloc(8);
  header[0] = name === "stderr" ? 2 : 1;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}
