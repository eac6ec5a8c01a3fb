// Plain timestamped lines on stderr: the generator's stdout may carry data (`--file -`), and a
// task log reads better as text than as JSON.
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

function write(level: string, message: string): void {
  process.stderr.write(`${new Date().toISOString()} ${level} generator: ${message}\n`);
}

export const stderrLogger: Logger = {
  info: (m) => write("INFO ", m),
  warn: (m) => write("WARN ", m),
  error: (m) => write("ERROR", m),
};

export const silentLogger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** 12345 → "12,345": counts in logs are read by people. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}
