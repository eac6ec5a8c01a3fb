// One file-naming style: every TypeScript file outside dags/ (named after their DAG ids, in
// snake_case as Airflow's are) and generator/ (a package of its own) is kebab-case.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { repoRoot } from "../../src/config/stand.ts";

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*(\.test|\.config\.d)?\.ts$/; // x.config.d.ts: the types of a JavaScript config

test("every TypeScript file outside dags/ and generator/ has a kebab-case name", () => {
  const files = execFileSync("git", ["ls-files", "*.ts"], { cwd: repoRoot, encoding: "utf8" }).split("\n").filter(Boolean);
  assert.ok(files.length > 100, `git ls-files listed the repository's files (${files.length})`);
  const offenders = files.filter((f) => !/^(dags|generator)\//.test(f) && !KEBAB.test(path.basename(f)));
  assert.deepEqual(offenders, [], "rename these to kebab-case (e.g. dagRuns.ts → dag-runs.ts)");
});
