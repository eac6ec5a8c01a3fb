// Copying a service's data directory into a snapshot and back, file by file: a file the service
// never changes in place once written (a ClickHouse part's files, a closed Kafka segment, a ZooKeeper
// snapshot) is hard-linked, so it costs no disk; every other file is copied, skipping its all-zero
// blocks (ZooKeeper preallocates its transaction log to 64 MiB of zeros) so a sparse file stays sparse.
// ext4 has no reflinks here (cp --reflink=always: "Operation not supported"), so links are the cheap path.
import { closeSync, fchmodSync, fstatSync, ftruncateSync, linkSync, lstatSync, mkdirSync, openSync, readSync, readdirSync, writeSync } from "node:fs";
import path from "node:path";

/** Whether a file (path relative to the tree's root, '/'-separated) is immutable once written. */
export type LinkRule = (relative: string, root: string) => boolean;

/** Which relative paths belong to the tree (a directory left out is not entered). */
export type TreeFilter = (relative: string, isDirectory: boolean) => boolean;

export interface TreeCopy {
  files: number;
  linkedFiles: number;
  /** Bytes of the linked files (shared with the source: no new disk). */
  linkedBytes: number;
  /** Bytes the copies take on disk (their allocated blocks). */
  copiedBytes: number;
}

const CHUNK = 1 << 16;
const ZERO = Buffer.alloc(CHUNK);

export function emptyCopy(): TreeCopy {
  return { files: 0, linkedFiles: 0, linkedBytes: 0, copiedBytes: 0 };
}

export function addCopies(a: TreeCopy, b: TreeCopy): TreeCopy {
  return { files: a.files + b.files, linkedFiles: a.linkedFiles + b.linkedFiles, linkedBytes: a.linkedBytes + b.linkedBytes, copiedBytes: a.copiedBytes + b.copiedBytes };
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
      cost.linkedBytes += st.size;
    } else {
      cost.copiedBytes += Math.min(st.size, st.blocks * 512);
    }
  }
  return cost;
}

/**
 * Copies `from` into `to` (which must not exist yet, or be empty): directories made, immutable files
 * linked, the rest copied sparsely with their mode. `signal` is read between files.
 */
export function copyTree(from: string, to: string, link: LinkRule, filter?: TreeFilter, signal?: AbortSignal): TreeCopy {
  const done = emptyCopy();
  mkdirSync(to, { recursive: true });
  for (const rel of listTree(from, filter)) {
    signal?.throwIfAborted();
    const source = path.join(from, rel);
    const target = path.join(to, rel);
    mkdirSync(path.dirname(target), { recursive: true });
    done.files += 1;
    if (link(rel, from)) {
      linkSync(source, target);
      done.linkedFiles += 1;
      done.linkedBytes += lstatSync(source).size;
    } else {
      done.copiedBytes += copySparse(source, target);
    }
  }
  // empty directories matter too (a ClickHouse table with no part yet, Kafka's partition dirs)
  copyEmptyDirs(from, to, filter);
  return done;
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
