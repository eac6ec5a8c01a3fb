// A runner's import of a DAG version: the version's bundle from runner.dag_code, written to
// .build/dags/<hash>.mjs and imported (once per hash: the module cache keeps it), so a run made
// from version N runs version N's code whatever the folder holds now, on any runner of the pool.
import { pathToFileURL } from "node:url";
import type pg from "pg";
import { type Dag, readVersionCode } from "../runner/index.ts";
import { bundleFile } from "./bundle.ts";
import { dagsOfModule } from "./dag-module.ts";

export async function importBundle(hash: string, code: string, fileloc: string): Promise<Dag[]> {
  const file = await bundleFile(hash, code);
  return dagsOfModule(await import(pathToFileURL(file).href), fileloc);
}

/** The DAG a version is, or undefined when the version has no bundle (a DAG given in code). */
export async function loadVersion(pool: pg.Pool, versionId: string): Promise<Dag | undefined> {
  const version = await readVersionCode(pool, versionId);
  if (!version?.bundle || !version.codeHash) return undefined;
  const dags = await importBundle(version.codeHash, version.bundle, `version ${version.versionNumber} of ${version.dagId}`);
  const dag = dags.find((d) => d.id === version.dagId);
  if (!dag) throw new Error(`the bundle of version ${version.versionNumber} of DAG '${version.dagId}' does not declare it`);
  return dag;
}
