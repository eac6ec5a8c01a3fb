// One DAG file as a version runs it: esbuild bundles the file with the modules of its own folder
// (the DAG's code: a change to any of them is a new version), and leaves every other import as an
// import: the engine (src/), the world's work (tasks/) and packages resolve against the importing
// runner's checkout, so a DAG built by one runner is the same class to every other. The bundle is
// written to <repo>/.build/dags/<sha256>.mjs, its name its hash, whole and then renamed.
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { build, type Message, type Plugin } from "esbuild";
import { repoRoot } from "../config/index.ts";
import { sha256 } from "../runner/index.ts";

/** Where bundles are imported from; the imports they keep are written relative to it. */
export const BUNDLE_DIR = path.join(repoRoot, ".build", "dags");

export interface Bundle {
  /** The file, relative to the repository when it is in it (its fileloc). */
  fileloc: string;
  hash: string;
  source: string;
  code: string;
}

/** A file esbuild refused: where, and what. */
export class BundleError extends Error {
  constructor(readonly fileloc: string, readonly detail: string) {
    super(detail);
    this.name = "BundleError";
  }
}

export function filelocOf(file: string): string {
  const rel = path.relative(repoRoot, file);
  return rel.startsWith("..") || path.isAbsolute(rel) ? file : rel.split(path.sep).join("/");
}

function describe(messages: readonly Message[]): string {
  return messages
    .map((m) => {
      const where = m.location ? `${filelocOf(path.resolve(repoRoot, m.location.file))}:${m.location.line}:${m.location.column + 1}` : "(no location)";
      const line = m.location?.lineText ? `\n    ${m.location.lineText}\n    ${" ".repeat(m.location.column)}^` : "";
      return `${where}: error: ${m.text}${line}`;
    })
    .join("\n");
}

/** Imports that leave the bundle's folder stay imports, relative to BUNDLE_DIR. */
function keepOutside(folder: string): Plugin {
  return {
    name: "keep-outside-the-folder",
    setup(b) {
      b.onResolve({ filter: /^\.{0,2}\// }, (args) => {
        if (args.kind === "entry-point") return undefined;
        const target = path.resolve(args.resolveDir, args.path);
        if (target === folder || target.startsWith(folder + path.sep)) return undefined;
        let rel = path.relative(BUNDLE_DIR, target).split(path.sep).join("/");
        if (!rel.startsWith(".")) rel = `./${rel}`;
        return { path: rel, external: true };
      });
    },
  };
}

/** Bundles one DAG file of `folder`; throws BundleError naming the file, line and column. */
export async function bundleDagFile(folder: string, file: string): Promise<Bundle> {
  const fileloc = filelocOf(file);
  const source = await readFile(file, "utf8");
  let result;
  try {
    result = await build({
      entryPoints: [file],
      bundle: true,
      write: false,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      sourcemap: "inline",
      sourcesContent: false,
      outdir: BUNDLE_DIR,
      logLevel: "silent",
      plugins: [keepOutside(folder)],
    });
  } catch (err) {
    const errors = (err as { errors?: Message[] }).errors;
    throw new BundleError(fileloc, errors && errors.length > 0 ? describe(errors) : String(err));
  }
  const code = result.outputFiles[0]?.text;
  if (code === undefined) throw new BundleError(fileloc, `${fileloc}: esbuild produced no output`);
  return { fileloc, hash: sha256(code), source, code };
}

/** The bundle's file, written once per hash (whole, then renamed: two runners may write it at once). */
export async function bundleFile(hash: string, code: string): Promise<string> {
  const file = path.join(BUNDLE_DIR, `${hash}.mjs`);
  try {
    await stat(file);
    return file;
  } catch {
    await mkdir(BUNDLE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, code);
    await rename(tmp, file);
    return file;
  }
}
