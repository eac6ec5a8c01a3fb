// Copying a service's data directory into a snapshot and back, file by file: a file the service
// never changes in place once written (a ClickHouse part's files, a closed Kafka segment, a ZooKeeper
// snapshot) is hard-linked, so it costs no disk; every other file is copied, skipping its all-zero
// blocks (ZooKeeper preallocates its transaction log to 64 MiB of zeros) so a sparse file stays sparse.
// ext4 has no reflinks here (cp --reflink=always: "Operation not supported"), so links are the cheap path.
import { execFile } from "node:child_process";
import { closeSync, existsSync, fchmodSync, fstatSync, ftruncateSync, linkSync, lstatSync, mkdirSync, openSync, readSync, readdirSync, rmSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { childOutput, errorMessage } from "../errors.ts";

const run = promisify(execFile);

/** Whether a file (path relative to the tree's root, '/'-separated) is immutable once written. */
export type LinkRule = (relative: string, root: string) => boolean;

/** Which relative paths belong to the tree (a directory left out is not entered). */
export type TreeFilter = (relative: string, isDirectory: boolean) => boolean;

/**
 * Directories (relative to the tree's root) linked whole by `cp -al`, the fast path for tens of
 * thousands of part files; the files in them that the link rule refuses or the filter leaves out
 * are then copied or removed one by one.
 */
export type BulkDirs = (root: string) => string[];

export interface TreeCopy {
  files: number;
  linkedFiles: number;
  /** Bytes the copies take on disk (their allocated blocks); linked files take none. */
  copiedBytes: number;
}

const CHUNK = 1 << 16;
const ZERO = Buffer.alloc(CHUNK);

export function emptyCopy(): TreeCopy {
  return { files: 0, linkedFiles: 0, copiedBytes: 0 };
}

export function addCopies(a: TreeCopy, b: TreeCopy): TreeCopy {
  return { files: a.files + b.files, linkedFiles: a.linkedFiles + b.linkedFiles, copiedBytes: a.copiedBytes + b.copiedBytes };
}

/** Every regular file of the tree, relative to `root`, in a stable order. */
export function listTree(root: string, filter: TreeFilter = () => true): string[] {
  const out: string[] = [];
  const walk = (relative: string): void => {
    const dir = path.join(root, relative);
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const rel = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (!filter(rel, entry.isDirectory())) continue;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile()) out.push(rel);
    }
  };
  walk("");
  return out;
}

/** What copying the tree would cost: files, and the disk its copies (not its links) would take. */
export function measureTree(root: string, link: LinkRule, filter?: TreeFilter): TreeCopy {
  const cost = emptyCopy();
  for (const rel of listTree(root, filter)) {
    const st = lstatSync(path.join(root, rel));
    cost.files += 1;
    if (link(rel, root)) {
      cost.linkedFiles += 1;
    } else {
      cost.copiedBytes += Math.min(st.size, st.blocks * 512);
    }
  }
  return cost;
}

/**
 * Copies `from` into `to` (which must not exist yet, or be empty): directories made, immutable files
 * linked, the rest copied sparsely with their mode. The `bulk` directories are linked whole by
 * `cp -al` first (then mended file by file where the rules say so); everything else file by file.
 * `signal` is read between files.
 */
export async function copyTree(from: string, to: string, link: LinkRule, filter: TreeFilter = () => true, signal?: AbortSignal, bulk?: BulkDirs): Promise<TreeCopy> {
  const done = emptyCopy();
  const breathe = breather();
  mkdirSync(to, { recursive: true });
  const bulkDirs = (bulk?.(from) ?? []).filter((dir) => filter(dir, true));
  const inBulk = (rel: string): boolean => bulkDirs.some((dir) => rel === dir || rel.startsWith(`${dir}/`));
  await Promise.all(bulkDirs.map((dir) => linkWhole(path.join(from, dir), path.join(to, dir))));
  for (const dir of bulkDirs) {
    for (const rel of listTree(path.join(from, dir)).map((r) => `${dir}/${r}`)) {
      await breathe();
      signal?.throwIfAborted();
      done.files += 1;
      const target = path.join(to, rel);
      if (!filterPath(filter, rel)) {
        done.files -= 1;
        unlinkSync(target);
      } else if (link(rel, from)) {
        done.linkedFiles += 1;
      } else {
        unlinkSync(target); // a link of a file the service changes in place: copy it instead
        done.copiedBytes += copySparse(path.join(from, rel), target);
      }
    }
    removeFilteredDirs(path.join(to, dir), dir, filter);
  }
  for (const rel of listTree(from, (r, isDir) => filter(r, isDir) && !inBulk(r))) {
    await breathe();
    signal?.throwIfAborted();
    const source = path.join(from, rel);
    const target = path.join(to, rel);
    mkdirSync(path.dirname(target), { recursive: true });
    done.files += 1;
    if (link(rel, from)) {
      linkSync(source, target);
      done.linkedFiles += 1;
    } else {
      done.copiedBytes += copySparse(source, target);
    }
  }
  // empty directories matter too (a ClickHouse table with no part yet, Kafka's partition dirs)
  copyEmptyDirs(from, to, (r, isDir) => filter(r, isDir) && !inBulk(r));
  return done;
}

/** How often a long copy gives the event loop back: every this many files, or this many ms. */
export const YIELD_EVERY_FILES = 200;
const YIELD_EVERY_MS = 50;

/**
 * A copy of tens of thousands of files with the fs's sync calls would hold the event loop for
 * seconds: the runner's lease heartbeat (10 s on the test stand) could not beat, the try was taken
 * over while it still copied, and two tries wrote one snapshot (seen in a full make test). So a copy
 * yields to the loop (timers first) every YIELD_EVERY_FILES files or 50 ms; the signal is read after.
 */
function breather(): () => Promise<void> {
  let files = 0;
  let since = performance.now();
  return async () => {
    files += 1;
    if (files % YIELD_EVERY_FILES !== 0 && performance.now() - since < YIELD_EVERY_MS) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    since = performance.now();
  };
}

/** `cp -al`: the directory's tree of hard links, in C, about twice as fast as linking from here. */
async function linkWhole(from: string, to: string): Promise<void> {
  mkdirSync(path.dirname(to), { recursive: true });
  try {
    await run("cp", ["-al", "--", from, to], { maxBuffer: 1024 * 1024 });
  } catch (err) {
    throw new Error(`linking ${from} into ${to} failed: ${childOutput(err).stderr.trim() || errorMessage(err)}`, { cause: err });
  }
}

/** A file is in the tree only when the filter takes every directory on its way and the file itself. */
function filterPath(filter: TreeFilter, rel: string): boolean {
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) if (!filter(parts.slice(0, i).join("/"), true)) return false;
  return filter(rel, false);
}

/** Removes, below a bulk-linked directory, the directories the filter leaves out (tmp parts). */
function removeFilteredDirs(dir: string, rel: string, filter: TreeFilter): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const child = `${rel}/${entry.name}`;
    if (!filter(child, true)) rmSync(path.join(dir, entry.name), { recursive: true, force: true });
    else removeFilteredDirs(path.join(dir, entry.name), child, filter);
  }
}

function copyEmptyDirs(from: string, to: string, filter?: TreeFilter, relative = ""): void {
  for (const entry of readdirSync(path.join(from, relative), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const rel = relative === "" ? entry.name : `${relative}/${entry.name}`;
    if (filter && !filter(rel, true)) continue;
    mkdirSync(path.join(to, rel), { recursive: true });
    copyEmptyDirs(from, to, filter, rel);
  }
}

/** Copies one file, leaving holes where the source reads as zeros; returns the bytes written. */
export function copySparse(source: string, target: string): number {
  const input = openSync(source, "r");
  let output: number | undefined;
  try {
    const st = fstatSync(input);
    output = openSync(target, "wx", st.mode & 0o7777);
    fchmodSync(output, st.mode & 0o7777);
    const buffer = Buffer.allocUnsafe(CHUNK);
    let position = 0;
    let written = 0;
    for (;;) {
      const read = readSync(input, buffer, 0, CHUNK, position);
      if (read === 0) break;
      const chunk = buffer.subarray(0, read);
      if (!(read === CHUNK && chunk.equals(ZERO))) {
        writeSync(output, chunk, 0, read, position);
        written += read;
      }
      position += read;
    }
    ftruncateSync(output, position);
    return written;
  } finally {
    closeSync(input);
    if (output !== undefined) closeSync(output);
  }
}
