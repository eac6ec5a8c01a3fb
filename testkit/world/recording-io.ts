// A TaskIo for tests that call the world's task functions directly: it keeps its log lines (and
// echoes them when asked).
import type { TaskIo } from "../../src/world/index.ts";

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
