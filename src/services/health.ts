// Waiting for a service to become healthy, with progress on the terminal and a useful failure:
// the error names the service and port, and carries the tail of its log and what to try.
import { setTimeout as sleep } from "node:timers/promises";
import { tailFile } from "./supervisor.ts";
import { errorMessage } from "../errors.ts";

export class ServiceStartError extends Error {
  constructor(
    readonly service: string,
    readonly port: number,
    message: string,
  ) {
    super(message);
    this.name = "ServiceStartError";
  }
}

export interface HealthWait {
  service: string;
  port: number;
  /** What we wait for, in words: "SELECT 1 as stand on 127.0.0.1:25432". */
  what: string;
  /** Resolves when healthy; throws or returns false when not yet. */
  probe: () => Promise<boolean>;
  /** False once the process has died: stop waiting at once. */
  isAlive: () => boolean;
  timeoutSeconds: number;
  logFiles: string[];
  hint: string;
  print?: (line: string) => void;
}

/** Polls `probe` until it succeeds; returns the seconds it took. */
export async function waitForHealthy(wait: HealthWait): Promise<number> {
  const print = wait.print ?? ((line: string) => console.log(line));
  const started = Date.now();
  const elapsed = (): number => (Date.now() - started) / 1000;
  print(`  waiting for ${wait.service}: ${wait.what}`);
  let lastProblem = "no answer yet";
  let lastReport = 0;
  while (elapsed() < wait.timeoutSeconds) {
    try {
      if (await wait.probe()) {
        print(`  ${wait.service} healthy after ${elapsed().toFixed(1)} s`);
        return elapsed();
      }
    } catch (err) {
      lastProblem = errorMessage(err);
    }
    if (!wait.isAlive()) throw startFailure(wait, `its process exited after ${elapsed().toFixed(1)} s`, lastProblem);
    if (elapsed() - lastReport >= 5) {
      lastReport = elapsed();
      print(`  ... still waiting for ${wait.service} (${elapsed().toFixed(0)} s): ${lastProblem}`);
    }
    await sleep(250);
  }
  throw startFailure(wait, `not healthy after ${wait.timeoutSeconds} s`, lastProblem);
}

function startFailure(wait: HealthWait, what: string, lastProblem: string): ServiceStartError {
  const logs = wait.logFiles.map((file) => `--- last 30 lines of ${file}:\n${tailFile(file, 30)}`).join("\n");
  return new ServiceStartError(
    wait.service,
    wait.port,
    `${wait.service} (port ${wait.port}) ${what}; last probe: ${lastProblem}\n${logs}\n` +
      `Try: ${wait.hint}`,
  );
}
