// Content addressing for builds: the files of a tree (minus what its .dockerignore or a skip rule
// leaves out) and one sha256 over their paths and bytes. The generator build is named by this hash,
// so the world is never played by code older than what is checked out.
import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import dockerignore from "@balena/dockerignore";
import { errorCode } from "../src/errors.ts";

/** Directory names never part of a build input (dependencies, local state). */
const ALWAYS_SKIPPED = new Set(["node_modules", ".git", ".stand", ".stand-test", "test-output"]);

/** Every file under `root`, relative with forward slashes, sorted; ALWAYS_SKIPPED directories are left out. */
export async function listTreeFiles(root: string): Promise<string[]> {
  const files: string[] = [];
  async function walk(relative: string): Promise<void> {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true });
    for (const entry of entries) {
      const child = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!ALWAYS_SKIPPED.has(entry.name)) await walk(child);
      } else if (entry.isFile()) {
        files.push(child);
      }
    }
  }
  await walk("");
  return files.sort();
}

/** The files of a Docker build context: the tree minus what its .dockerignore excludes (as dockerode packs it). */
export async function listBuildContext(contextDir: string): Promise<string[]> {
  const files = await listTreeFiles(contextDir);
  let rules: string;
  try {
    rules = await readFile(path.join(contextDir, ".dockerignore"), "utf8");
  } catch (err) {
    // no .dockerignore: the whole tree is the context, as Docker sends it
    if (errorCode(err) === "ENOENT") return files;
    throw err;
  }
  // a CommonJS module whose typings declare an ES default export: under NodeNext the callable is .default
  return dockerignore.default({ ignorecase: false }).add(rules).filter(files);
}

export interface HashedInput {
  /** Directory the files are relative to. */
  root: string;
  /** Files relative to root; each is hashed as "<label>/<file>" so two roots cannot collide. */
  files: readonly string[];
  label: string;
}

/** sha256 (hex) over every input file's label/path and bytes, in the given order. */
export async function hashInputs(inputs: readonly HashedInput[]): Promise<string> {
  const hash = createHash("sha256");
  for (const input of inputs) {
    for (const file of input.files) {
      const bytes = await readFile(path.join(input.root, file));
      hash.update(`${input.label}/${file}\0${bytes.length}\0`);
      hash.update(bytes);
    }
  }
  return hash.digest("hex");
}
