// Shared bits of the world tests: a TaskIo that keeps its log lines (and echoes them when asked),
// and random names for Kafka objects a test owns.
import { randomBytes } from "node:crypto";
import type { TaskIo } from "../../src/world/io.ts";

export interface RecordingIo extends TaskIo {
  lines: string[];
}

/** A TaskIo whose log lines are kept; set echo to print them as they come (long steps). */
export function recordingIo(echo = false, signal: AbortSignal = new AbortController().signal): RecordingIo {
  const lines: string[] = [];
  return {
    signal,
    lines,
    log: (line: string) => {
      lines.push(line);
      if (echo) console.log(`  | ${line}`);
    },
  };
}

export function randomName(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}
