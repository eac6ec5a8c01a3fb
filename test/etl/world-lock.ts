// The shared-world lock for tests: the world databases (stg ods dds dm dic) are shared by every
// test on the stand, so a test that creates, drops or loads them holds an exclusive flock on
// /tmp/world.lock for its whole run. When the test was started under `flock /tmp/world.lock …`
// (an ancestor holds the lock already), taking it again would deadlock, so it is left as is.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";

export const WORLD_LOCK_PATH = "/tmp/world.lock";

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function ancestors(): Set<number> {
  const seen = new Set<number>();
  for (let pid: number | undefined = process.pid; pid !== undefined && !seen.has(pid); pid = parentOf(pid)) seen.add(pid);
  return seen;
}

/** Pids holding a flock on the lock file (from /proc/locks, matched by inode). */
function lockHolders(): number[] {
  let inode: number;
  try {
    inode = statSync(WORLD_LOCK_PATH).ino;
  } catch {
    return [];
  }
  return readFileSync("/proc/locks", "utf8")
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1] === "FLOCK" && Number(f[5]?.split(":")[2]) === inode)
    .map((f) => Number(f[4]));
}

export interface WorldLock {
  release(): Promise<void>;
}

/** Takes the world lock (waiting for other holders) unless an ancestor process holds it already. */
export async function holdWorldLock(log: (line: string) => void = () => {}): Promise<WorldLock> {
  try {
    statSync(WORLD_LOCK_PATH);
  } catch {
    writeFileSync(WORLD_LOCK_PATH, "", { flag: "a" });
  }
  const mine = ancestors();
  if (lockHolders().some((pid) => mine.has(pid))) {
    log(`${WORLD_LOCK_PATH} is held by this test's own parent (flock wrapper)`);
    return { release: () => Promise.resolve() };
  }
  // flock keeps the lock while its child runs; the child exits when our stdin pipe closes, which
  // also happens if this process dies, so a crashed test never leaves the world locked.
  const child: ChildProcess = spawn("flock", [WORLD_LOCK_PATH, "sh", "-c", "echo locked; exec cat >/dev/null"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`flock ${WORLD_LOCK_PATH} exited with ${code} before locking`)));
    child.stdout?.once("data", () => resolve());
  });
  child.removeAllListeners("exit");
  log(`${WORLD_LOCK_PATH} taken (flock pid ${child.pid})`);
  return {
    release: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.stdin?.end();
      }),
  };
}
