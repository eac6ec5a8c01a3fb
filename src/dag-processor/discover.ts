// Which files of a DAG folder are DAG files: every .ts file under it, but those its .airflowignore
// names (gitignore syntax, as Airflow's default glob syntax: `support/`, `index.ts`, `*_draft.ts`);
// and a signature of the whole folder, so a rescan knows cheaply whether anything changed.
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import ignoreModule, { type Ignore } from "ignore";
import { errorCode } from "../errors.ts";

export const IGNORE_FILE = ".airflowignore";

async function walk(dir: string, base: string = dir): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (errorCode(err) === "ENOENT") return [];
    throw err;
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (entry.name === "node_modules" || entry.name.startsWith(".#")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await walk(full, base)));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}

// a CommonJS package whose typings say `export default`: under NodeNext the callable is .default
const ignore = ignoreModule.default;

async function ignoreRules(dir: string): Promise<Ignore> {
  const rules = ignore();
  try {
    rules.add(await readFile(path.join(dir, IGNORE_FILE), "utf8"));
  } catch (err) {
    if (errorCode(err) !== "ENOENT") throw err;
  }
  return rules;
}

/** The DAG files of `dir`, absolute, sorted (a folder that does not exist has none). */
export async function discoverDagFiles(dir: string): Promise<string[]> {
  const rules = await ignoreRules(dir);
  return (await walk(dir))
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .filter((file) => !rules.ignores(path.relative(dir, file).split(path.sep).join("/")))
    .sort();
}

/** Every file under the folders with its size and mtime: equal signatures, nothing changed. */
export async function folderSignature(dirs: readonly string[]): Promise<string> {
  const parts: string[] = [];
  for (const dir of dirs) {
    for (const file of (await walk(dir)).sort()) {
      try {
        const s = await stat(file);
        parts.push(`${file}:${s.size}:${s.mtimeMs}`);
      } catch (err) {
        if (errorCode(err) !== "ENOENT") throw err; // removed while we looked: the next look sees it
      }
    }
  }
  return parts.join("\n");
}
