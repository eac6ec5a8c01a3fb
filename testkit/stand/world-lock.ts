// The shared-world lock: every test that touches stg ods dds dm dic, the topics hits/orders or the
// groups clickstream_* of a stand holds `flock <state_dir>/world.lock` (other suites do the same):
// one lock per stand, so the two test stands of `make test` each run their own world files. The lock is held by
// a child `flock … cat` process whose stdin we keep open: closing it (or dying) releases the lock.
// When an ancestor process already holds it (someone ran the suite under `flock <that file> …`),
// taking it again would wait forever, so we notice that and go ahead under the ancestor's lock.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { loadStandConfig, stateDir } from "../../src/config/index.ts";

/** The world lock of the stand in force (STAND_CONFIG): a file in its state directory. */
export function worldLockFile(): string {
  return path.join(stateDir(loadStandConfig()), "world.lock");
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[1]);
  } catch {
    return undefined;
  }
}

function ancestors(): Set<number> {
  const seen = new Set<number>();
  for (let pid = parentOf(process.pid); pid !== undefined && pid > 1 && !seen.has(pid); pid = parentOf(pid)) seen.add(pid);
  return seen;
}

/** Pids holding a flock on the lock file's inode (from /proc/locks). */
function lockHolders(file: string): number[] {
  if (!existsSync(file)) return [];
  const inode = statSync(file).ino;
  return readFileSync("/proc/locks", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1] === "FLOCK" && f[4] !== undefined && Number(f[5]?.split(":")[2]) === inode)
    .map((f) => Number(f[4]));
}

export interface WorldLock {
  release(): Promise<void>;
}

/** Takes the world lock, waiting as long as another holder needs it (saying so every 30 s). */
export async function takeWorldLock(log: (line: string) => void = (line) => console.log(line)): Promise<WorldLock> {
  const file = worldLockFile();
  mkdirSync(path.dirname(file), { recursive: true });
  if (!existsSync(file)) writeFileSync(file, "");
  const mine = ancestors();
  const inherited = lockHolders(file).find((pid) => mine.has(pid));
  if (inherited !== undefined) {
    log(`world lock: already held by ancestor pid ${inherited}; running under it`);
    return { release: () => Promise.resolve() };
  }
  const child = spawn("flock", [file, "sh", "-c", "echo held; exec cat >/dev/null"], { stdio: ["pipe", "pipe", "inherit"] });
  await waitUntilHeld(child, file, log);
  return {
    release: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("close", () => resolve());
        child.stdin?.end();
      }),
  };
}

function waitUntilHeld(child: ChildProcess, file: string, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const notice = setInterval(() => {
      log(`world lock: waiting ${Math.round((Date.now() - started) / 1000)} s for ${file} (held by pid ${lockHolders(file).join(", ") || "?"})`);
    }, 30_000);
    child.stdout?.once("data", () => {
      clearInterval(notice);
      resolve();
    });
    child.once("error", (err) => {
      clearInterval(notice);
      reject(err);
    });
    child.once("close", (code) => {
      clearInterval(notice);
      reject(new Error(`flock exited with ${code} before taking ${file}`));
    });
  });
}
