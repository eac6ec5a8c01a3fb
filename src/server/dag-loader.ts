// Loads the DAGs the runner serves: dags/index.ts when every DAG loads; when it does not, every DAG
// module of the folder on its own, so one broken file is an import error (GET /api/v2/importErrors,
// as Airflow's DAG processor reports it) instead of a runner that does not start. A DAG the
// registry refuses (a duplicate id, a waiting trigger naming an unknown DAG, a trigger loop) is left
// out the same way.
import { readdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "pino";
import type { DagImportError } from "../api/index.ts";
import { repoRoot } from "../config/index.ts";
import { Dag, DagDefinitionError, DagRegistry } from "../runner/index.ts";
import { coerceError } from "../errors.ts";

export interface LoadedDags {
  dags: Dag[];
  importErrors: DagImportError[];
  loadedAt: Date;
}

export interface DagFolder {
  /** The folder's DAG modules: each default-exports a built Dag. */
  dir: string;
  /** The module listing them all (exports `dags`); its name is not a DAG module. */
  index: string;
}

export const DAGS_FOLDER: DagFolder = { dir: path.join(repoRoot, "dags"), index: "index.ts" };

function relative(file: string): string {
  return path.relative(repoRoot, file).split(path.sep).join("/");
}

function stackOf(err: unknown): string {
  const error = coerceError(err);
  return error.stack ?? `${error.name}: ${error.message}`;
}

async function importIndex(folder: DagFolder): Promise<Dag[]> {
  const module = (await import(pathToFileURL(path.join(folder.dir, folder.index)).href)) as { dags?: unknown };
  if (!Array.isArray(module.dags) || !module.dags.every((d) => d instanceof Dag)) {
    throw new TypeError(`${folder.index} must export 'dags', an array of built DAGs`);
  }
  return module.dags;
}

/** Every DAG module of the folder on its own: the DAGs that load, and an error per file that does not. */
async function importEachModule(folder: DagFolder, errors: DagImportError[], now: Date): Promise<Dag[]> {
  const files = (await readdir(folder.dir)).filter((f) => f.endsWith(".ts") && f !== folder.index).sort();
  const dags: Dag[] = [];
  for (const file of files) {
    const full = path.join(folder.dir, file);
    try {
      const module = (await import(pathToFileURL(full).href)) as { default?: unknown };
      if (!(module.default instanceof Dag)) throw new TypeError(`${file} does not default-export a built DAG (defineDag(...).build())`);
      dags.push(module.default);
    } catch (err) {
      errors.push({ id: errors.length + 1, filename: relative(full), timestamp: now, stackTrace: stackOf(err) });
    }
  }
  return dags;
}

/** Drops the DAGs the registry refuses, one at a time (it names the first it finds), as import errors. */
function keepRegistrable(dags: Dag[], errors: DagImportError[], now: Date): Dag[] {
  let kept = dags;
  for (;;) {
    try {
      new DagRegistry(kept);
      return kept;
    } catch (err) {
      if (!(err instanceof DagDefinitionError)) throw err;
      const index = kept.findIndex((dag) => dag.id === err.dagId);
      const refused = kept[index];
      if (!refused) throw err;
      // a duplicate id names the later DAG, which is the one dropped
      const lastIndex = kept.map((dag) => dag.id).lastIndexOf(err.dagId);
      const dropped = kept[lastIndex] ?? refused;
      errors.push({ id: errors.length + 1, filename: dropped.fileloc, timestamp: now, stackTrace: stackOf(err) });
      kept = kept.filter((_dag, i) => i !== lastIndex);
    }
  }
}

export async function loadDags(logger: Logger, folder: DagFolder = DAGS_FOLDER): Promise<LoadedDags> {
  const loadedAt = new Date();
  const importErrors: DagImportError[] = [];
  let dags: Dag[];
  try {
    dags = await importIndex(folder);
  } catch (err) {
    logger.error({ err: coerceError(err) }, `${folder.index} did not load: loading each DAG module on its own`);
    dags = await importEachModule(folder, importErrors, loadedAt);
  }
  dags = keepRegistrable(dags, importErrors, loadedAt);
  for (const e of importErrors) logger.error({ file: e.filename, error: e.stackTrace.split("\n")[0] }, "DAG file not loaded (see GET /api/v2/importErrors)");
  return { dags, importErrors, loadedAt };
}
