// Runs a TypeScript entry point from one esbuild bundle instead of through tsx's loader:
//
//   node scripts/launch.mjs src/world-ops/cli.ts ARGS…
//
// Why: a program started through `node --import tsx` spends ~0.6 CPU-s resolving and loading its
// 100-180 modules through tsx's hooks (0.9 s for the world CLI, 0.3 s from a bundle); `make test`
// starts hundreds of them on a 2-core machine whose CPU is the gate's bottleneck (docs/stand.md,
// "Tests apart"). The bundle is kept in .build/launch/ with the list of files it was built from
// (their size and mtime) and is built again, before it runs, as soon as one of them changed, so
// it never runs old code. Packages stay outside the bundle (node_modules resolves them as
// before); each module keeps its own import.meta.url, so paths computed from it and the entry
// guards (import.meta.url === argv[1]) see the source file, as under tsx. Stack traces name the
// TypeScript files (inline source maps). Only for programs that import no TypeScript at run time:
// the runner loads the DAG folder with import() and stays on tsx.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import console from "node:console";
import process from "node:process";
import { build } from "esbuild";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BUILD_DIR = path.join(repoRoot, ".build", "launch");
const INPUTS_MARK = "// launch inputs: ";

/** Each module's import.meta.{url,filename,dirname} as its source file's, not the bundle's. */
const ownImportMeta = {
  name: "own-import-meta",
  setup(b) {
    b.onLoad({ filter: /\.[cm]?ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes("import.meta")) return { contents: source, loader: "ts" };
      const contents = source
        .replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll("import.meta.filename", JSON.stringify(args.path))
        .replaceAll("import.meta.dirname", JSON.stringify(path.dirname(args.path)));
      return { contents, loader: "ts" };
    });
  },
};

function unchanged(inputs) {
  return inputs.every(({ file, size, mtimeMs }) => {
    try {
      const s = statSync(file);
      return s.size === size && s.mtimeMs === mtimeMs;
    } catch {
      return false; // a source file gone: build again (esbuild then names what is missing)
    }
  });
}

/** The files a bundle was built from, from its first line. */
function readInputs(out) {
  try {
    const head = readFileSync(out, "utf8").split("\n", 1)[0] ?? "";
    if (!head.startsWith(INPUTS_MARK)) return undefined;
    const parsed = JSON.parse(head.slice(INPUTS_MARK.length));
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined; // no bundle yet, or not one of ours: build it
  }
}

async function bundle(entry, out) {
  mkdirSync(path.dirname(out), { recursive: true });
  const partial = `${out}.${process.pid}.partial`;
  try {
    const result = await build({
      entryPoints: [entry],
      outfile: out,
      write: false,
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: "inline",
      metafile: true,
      logLevel: "silent",
      plugins: [ownImportMeta],
    });
    const inputs = Object.keys(result.metafile.inputs).map((rel) => {
      const file = path.resolve(repoRoot, rel);
      const s = statSync(file);
      return { file, size: s.size, mtimeMs: s.mtimeMs };
    });
    const code = result.outputFiles.find((f) => f.path === out)?.text ?? "";
    // the list of inputs and the code in one file, renamed into place whole: two launches may
    // build at once (two test lanes), and a reader sees one complete build or the other
    writeFileSync(partial, `${INPUTS_MARK}${JSON.stringify(inputs)}\n${code}`);
    renameSync(partial, out);
  } catch (err) {
    rmSync(partial, { force: true });
    const errors = err?.errors?.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ""}${e.text}`).join("\n  ");
    console.error(`launch: bundling ${path.relative(repoRoot, entry)} failed${errors ? `:\n  ${errors}` : `: ${err}`}\n  (node --import tsx ${path.relative(repoRoot, entry)} runs it without a bundle)`);
    process.exit(1);
  }
}

const [entryArg, ...args] = process.argv.slice(2);
if (entryArg === undefined || !entryArg.endsWith(".ts")) {
  console.error("usage: node scripts/launch.mjs ENTRY.ts [ARGS…]  (a TypeScript entry point of this repository)");
  process.exit(2);
}
const entry = path.resolve(entryArg);
if (!existsSync(entry)) {
  console.error(`launch: ${entryArg}: no such file`);
  process.exit(2);
}
const name = path.relative(repoRoot, entry).replace(/\.ts$/, "").replaceAll(path.sep, "__");
const out = path.join(BUILD_DIR, `${name}.mjs`);
const inputs = readInputs(out);
if (inputs === undefined || !unchanged(inputs)) await bundle(entry, out);

// the program sees itself started as `node ENTRY.ts ARGS…`, as under tsx
process.argv = [process.argv[0], entry, ...args];
process.setSourceMapsEnabled(true);
await import(pathToFileURL(out).href);
