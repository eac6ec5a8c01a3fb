// The folders the runner's DAG processor parses: the repository's dags/ (the world DAGs and the
// user's own, in git) and the stand's <state_dir>/dags (a stand's own DAG files, outside git: the
// test stands' probe DAGs, a user's scratch DAGs).
import path from "node:path";
import { repoRoot, stateDir, type StandConfig } from "../config/index.ts";
import type { DagFolder } from "../dag-processor/index.ts";

export function dagFolders(config: StandConfig): DagFolder[] {
  return [
    { name: "dags-folder", dir: path.join(repoRoot, "dags") },
    { name: "stand-dags", dir: path.join(stateDir(config), "dags") },
  ];
}
