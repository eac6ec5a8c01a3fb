// Starts stand services as detached background processes and stops only the ones it started.
// A pid file records the pid and a marker (a path unique to the service); a process counts as ours
// only while /proc/<pid>/cmdline still contains that marker, so a recycled pid is never signalled.
import { spawn } from "node:child_process";
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errorCode } from "../errors.ts";

export interface PidRecord {
  pid: number;
  marker: string;
  startedAt: string;
}

/**
 * What was last asked of a service: "up" by a start (make up, stand up, a test, the keeper), "down"
 * by a stop (make down, a test, a DAG task). The keeper (src/keeper/policy.ts) restarts a service
 * that died only while it is wanted up, so a service stopped on purpose stays stopped.
 */
export interface Want {
  want: "up" | "down";
  /** Who asked: the command line of the process that started or stopped it. */
  by: string;
  at: string;
  /**
   * A stop that holds the service down only while this process lives (a world snapshot or restore
   * in the runner): once it is gone, the service reads as wanted up again, so a runner killed
   * mid-snapshot does not leave the world's services down for good.
   */
  holder?: number;
}

/** How a process the caller spawned ended (only the parent sees this; others see the pid vanish). */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StopOptions {
  /** Leave the service wanted up (the keeper stopping a hung process to start it again). */
  keepWanted?: boolean;
  /** Wanted down only while this process lives (see Want.holder). */
  holder?: number;
}

export interface StartSpec {
  service: string;
  command: string;
  args: string[];
  /** File receiving the process's stdout and stderr. */
  logFile: string;
  /** A string that appears in the process's command line and nowhere else (a path under .stand). */
  marker: string;
  uid?: number;
  gid?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Called when the process ends, with its exit code or signal (the spawning process only). */
  onExit?: (exit: ExitInfo) => void;
}

/** A short description of this process for Want.by: its script and arguments. */
function whoAmI(): string {
  return process.argv.slice(1).map((a) => path.basename(a)).join(" ").slice(0, 200) || `pid ${process.pid}`;
}

export class Supervisor {
  constructor(readonly pidDir: string) {}

  pidFile(service: string): string {
    return path.join(this.pidDir, `${service}.pid`);
  }

  wantFile(service: string): string {
    return path.join(this.pidDir, `${service}.want`);
  }

  /** What was last asked of the service, or undefined when nothing ever was (an older stand). */
  readWant(service: string): Want | undefined {
    try {
      const parsed = JSON.parse(readFileSync(this.wantFile(service), "utf8")) as Partial<Want>;
      if (parsed.want !== "up" && parsed.want !== "down") return undefined;
      const holder = typeof parsed.holder === "number" ? parsed.holder : undefined;
      if (parsed.want === "down" && holder !== undefined && !pidAlive(holder)) {
        return { want: "up", by: `${String(parsed.by)}, whose hold lapsed (its process ${holder} is gone)`, at: String(parsed.at) };
      }
      return { want: parsed.want, by: String(parsed.by), at: String(parsed.at), ...(holder === undefined ? {} : { holder }) };
    } catch {
      // a torn or foreign desire file: no desire recorded
      return undefined;
    }
  }

  setWant(service: string, want: Want["want"], by: string = whoAmI(), holder?: number): void {
    mkdirSync(this.pidDir, { recursive: true });
    const file = this.wantFile(service);
    const record: Want = { want, by, at: new Date().toISOString(), ...(holder === undefined ? {} : { holder }) };
    writeFileSync(`${file}.tmp`, JSON.stringify(record) + "\n");
    renameSync(`${file}.tmp`, file); // a reader never sees half a file
  }

  /**
   * Runs `work` holding the service's start lock: a check-then-start (is it running? then start it)
   * by `stand up`, a test and the keeper at once would otherwise start two servers, the loser of
   * which overwrites the pid file and exits. A lock whose holder died is taken over.
   */
  async withStartLock<T>(service: string, work: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
    mkdirSync(this.pidDir, { recursive: true });
    const file = path.join(this.pidDir, `${service}.lock`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
        break;
      } catch (err) {
        if (errorCode(err) !== "EEXIST") throw err;
        const holder = Number(readFileSync(file, "utf8").trim());
        if (!Number.isInteger(holder) || holder <= 0 || !pidAlive(holder)) {
          rmSync(file, { force: true }); // its holder died holding it
          continue;
        }
        if (Date.now() > deadline) throw new Error(`${service}: the start lock ${file} is held by pid ${holder} for more than ${timeoutMs / 1000} s`);
        await sleep(100);
      }
    }
    try {
      return await work();
    } finally {
      rmSync(file, { force: true });
    }
  }

  readPid(service: string): PidRecord | undefined {
    const file = this.pidFile(service);
    if (!existsSync(file)) return undefined;
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<PidRecord>;
      if (typeof parsed.pid !== "number" || typeof parsed.marker !== "string") return undefined;
      return { pid: parsed.pid, marker: parsed.marker, startedAt: String(parsed.startedAt) };
    } catch {
      return undefined; // a torn or foreign file: treat as "not running", it is rewritten on start
    }
  }

  /** The live pid of a service we started, or undefined (stale pid files are removed; the file of a
   * process still exiting is kept until it is gone, see settle). */
  runningPid(service: string): number | undefined {
    const record = this.readPid(service);
    if (!record) return undefined;
    if (isProcessOurs(record)) return record.pid;
    if (isGone(record)) rmSync(this.pidFile(service), { force: true });
    return undefined;
  }

  /**
   * Waits until the service's port can be bound; every start calls this first. While its last
   * process is still exiting (killed a moment ago, it may still hold its port or its lock files),
   * up to `timeoutMs` for it and its port; with no such process (a stop removed the pid file a
   * moment ago), up to 5 s for the socket of a server just killed to close. True when the port is
   * free, false when something still holds it (another program: the caller reports it).
   */
  async settle(service: string, port: number, timeoutMs = 10_000): Promise<boolean> {
    const record = this.readPid(service);
    if (!record || isProcessOurs(record)) return portFreed(port);
    const deadline = Date.now() + timeoutMs;
    await waitForExit(record, timeoutMs);
    rmSync(this.pidFile(service), { force: true });
    // a zombie thread-group leader can show "exited" while its other threads still hold its sockets
    return portFreed(port, Math.max(0, deadline - Date.now()));
  }

  start(spec: StartSpec): number {
    mkdirSync(this.pidDir, { recursive: true });
    mkdirSync(path.dirname(spec.logFile), { recursive: true });
    const fd = openSync(spec.logFile, "a");
    try {
      writeFileSync(fd, `\n=== ${new Date().toISOString()} starting ${spec.service}: ${spec.command} ${spec.args.join(" ")}\n`);
      // detached: its own session, so the stand outlives the CLI and a Ctrl-C in the shell does not reach it
      const child = spawn(spec.command, spec.args, {
        detached: true,
        stdio: ["ignore", fd, fd],
        cwd: spec.cwd,
        env: spec.env,
        uid: spec.uid,
        gid: spec.gid,
      });
      if (child.pid === undefined) throw new Error(`${spec.service}: could not spawn ${spec.command}`);
      const onExit = spec.onExit;
      if (onExit) child.once("exit", (code, signal) => onExit({ code, signal }));
      child.unref();
      const record: PidRecord = { pid: child.pid, marker: spec.marker, startedAt: new Date().toISOString() };
      writeFileSync(this.pidFile(spec.service), JSON.stringify(record) + "\n");
      this.setWant(spec.service, "up");
      return child.pid;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Stops a service by its pid file: `signal`, wait up to `graceMs`, then SIGKILL.
   * Returns what happened so the CLI can say it.
   */
  async stop(service: string, signal: NodeJS.Signals, graceMs: number, options: StopOptions = {}): Promise<"not-running" | "stopped" | "killed"> {
    if (options.keepWanted) return this.stopNow(service, signal, graceMs); // the caller holds the start lock
    // wanted down first, under the start lock: a keeper restarting it at this moment either
    // finishes its start before (and this stops that process) or reads "down" and starts nothing
    return this.withStartLock(service, async () => {
      this.setWant(service, "down", undefined, options.holder);
      return this.stopNow(service, signal, graceMs);
    });
  }

  private async stopNow(service: string, signal: NodeJS.Signals, graceMs: number): Promise<"not-running" | "stopped" | "killed"> {
    const record = this.readPid(service);
    if (!record || !isProcessOurs(record)) {
      rmSync(this.pidFile(service), { force: true });
      return "not-running";
    }
    signalQuietly(record.pid, signal);
    if (await waitForExit(record, graceMs)) {
      rmSync(this.pidFile(service), { force: true });
      return "stopped";
    }
    signalQuietly(record.pid, "SIGKILL");
    await waitForExit(record, 5000);
    rmSync(this.pidFile(service), { force: true });
    return "killed";
  }
}

function pidAlive(pid: number): boolean {
  try {
    return !isZombieOrDead(pid);
  } catch {
    // no /proc entry to read: the process is gone
    return false;
  }
}

/** True while the pid is alive (not a zombie) and its command line still carries our marker. */
export function isProcessOurs(record: PidRecord): boolean {
  try {
    if (isZombieOrDead(record.pid)) return false;
    return commandLine(record.pid).includes(record.marker);
  } catch {
    // no /proc entry to read: the process is gone
    return false;
  }
}

/** Field 3 of /proc/<pid>/stat, after the parenthesised command name: Z = zombie, X = dead.
 * Throws when the pid has no /proc entry. */
function isZombieOrDead(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state === "Z" || state === "X";
}

/** The pid's command line, arguments joined by spaces ("" while it exits). Throws without a /proc entry. */
function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
}

/** The pid now runs a command that is not ours (it was recycled). */
function runsAnotherCommand(record: PidRecord): boolean {
  const cmdline = commandLine(record.pid);
  return cmdline.length > 0 && !cmdline.includes(record.marker);
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone between the check and the signal
  }
}

/**
 * True once the process has exited: no /proc entry, a zombie, or a pid now running another command.
 * A process still tearing itself down has an empty command line, so that does not count as exited.
 * A zombie leader's other threads may still hold its sockets for a moment: settle also waits for
 * the port.
 */
function hasExited(record: PidRecord): boolean {
  try {
    return isZombieOrDead(record.pid) || runsAnotherCommand(record);
  } catch {
    // no /proc entry to read: the process is gone
    return true;
  }
}

/** True once nothing of the process is left to wait for: no /proc entry, or its pid runs another
 * command. A zombie is not gone: its leader may be one while its other threads still exit. */
function isGone(record: PidRecord): boolean {
  try {
    return runsAnotherCommand(record);
  } catch {
    // no /proc entry to read: the process is gone
    return true;
  }
}

async function waitForExit(record: PidRecord, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(record)) return true;
    await sleep(50);
  }
  return hasExited(record);
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
/**
 * True once nothing accepts on the port, waiting up to `timeoutMs`: a server killed a moment ago
 * (its pid file already gone) can keep its socket for a little while its threads are torn down.
 * A port still open after that is someone else's.
 */
async function portFreed(port: number, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!(await isPortOpen(port))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

export function isPortOpen(port: number, host = "127.0.0.1", timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (open: boolean): void => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** The last `lines` lines of a file, or a note that it does not exist yet. */
export function tailFile(file: string, lines = 30): string {
  if (!existsSync(file)) return `(no file ${file} yet)`;
  // the last 64 KiB are plenty for 30 lines; a ClickHouse log can be hundreds of MiB
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString("utf8").split("\n").slice(-lines - 1).join("\n");
  } finally {
    closeSync(fd);
  }
}
