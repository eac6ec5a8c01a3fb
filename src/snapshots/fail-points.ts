// Snapshots' test-only door: the fail points a test stand arms under <state_dir>/snapshots/.fail-points/
// (snapshots.fail_points in the stand config, refused in the user's stand.yaml by parseStandConfig).
// Every test hook of this room is here; the store asks these two questions and nothing else.
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import type { StandConfig } from "../config/index.ts";

function armed(config: StandConfig, snapshotsDir: string, name: string): string | undefined {
  if (config.snapshots.fail_points !== true) return undefined;
  const file = path.join(snapshotsDir, ".fail-points", name);
  return existsSync(file) ? file : undefined;
}

/**
 * The test stand's way to kill a save or a restore half way, by construction: with the file
 * .fail-points/kill-<save|restore>-after-<part> present, the process doing it (the runner) SIGKILLs
 * itself right after that part, once (the file is taken).
 */
export function killPoint(config: StandConfig, snapshotsDir: string, what: "save" | "restore", part: string): void {
  const file = armed(config, snapshotsDir, `kill-${what}-after-${part}`);
  if (file === undefined) return;
  rmSync(file, { force: true });
  process.kill(process.pid, "SIGKILL");
}

/** The disk's free bytes as the test stand says they are (.fail-points/free-bytes), to reach a refusal for want of room. */
export function stagedFreeBytes(config: StandConfig, snapshotsDir: string): number | undefined {
  const file = armed(config, snapshotsDir, "free-bytes");
  return file === undefined ? undefined : Number(readFileSync(file, "utf8").trim());
}
