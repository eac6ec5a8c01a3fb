// The DAG folder while a world step runs, on the test stand (never the user's): the stand's own
// runner parses <state_dir>/dags beside dags/. With world_next_day held in the middle of its day (a
// loader pause point), a DAG file is added, changed under a run of its version 1 (which ends on
// version 1's graph and code), broken each of the four ways, fixed and removed. Each shows through
// the REST API as Airflow's DAG processor shows it, the world step keeps running and its DAG keeps
// its version, and the day lands exactly once (playDay's checks).
import assert from "node:assert/strict";
import { mkdir, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import type { DagDetailsResponse, DagRunResponse, ImportErrorResponse, TaskInstanceResponse } from "../../src/api/schemas.ts";
import { ApiResponseError } from "../../src/cli/index.ts";
import { repoRoot, stateDir } from "../../src/config/index.ts";
import { standContext } from "../../src/stand/stand.ts";
import { DEFINE_DAG_IMPORT, dagFile, until } from "../../testkit/runner/dag-folder.ts";
import { armRunnerPauses, pauseReached, releasePause, releasePauses } from "../../testkit/runner/runner-pauses.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { playDay } from "../../testkit/world/faulted-day.ts";
import { api, taskLog, waitForRun } from "../../testkit/world/rest-world.ts";

const quiet = (): undefined => undefined;
const ctx = standContext(quiet);
const folder = path.join(stateDir(ctx.config), "dags");
/** How the processor names a file of the folder (relative to the repository when inside it). */
const shown = (file: string): string => {
  const rel = path.relative(repoRoot, path.join(folder, file));
  return rel.startsWith("..") || path.isAbsolute(rel) ? path.join(folder, file) : rel.split(path.sep).join("/");
};
const PROBE = "zz_step_probe";
const FIXED = "zz_step_fixed";
const NOTE = "dag folder during a world step";
const enc = encodeURIComponent;

const broken = [
  { file: "zz_throws.ts", text: `const n = 1;\nthrow new Error("broken on purpose " + n);\n`, stack: /broken on purpose 1[\s\S]*zz_throws\.ts:2:7/ },
  { file: "zz_compiles.ts", text: `${DEFINE_DAG_IMPORT}\nconst a = ;\n`, stack: /^SyntaxError: .*zz_compiles\.ts:2:11/ },
  { file: "zz_loops.ts", text: `let i = 0;\nwhile (i >= 0) { i = (i + 1) % 10; }\nexport default 1;\n`, stack: /did not finish within \d+ s[\s\S]*zz_loops\.ts:2:/ },
  { file: "zz_twin.ts", text: dagFile(PROBE, ["x"], "twin"), stack: new RegExp(`declares DAG '${PROBE}', which .*zz_step_probe\\.ts already declares`) },
];
const written = [`${PROBE}.ts`, ...broken.map((b) => b.file)];

async function details(dagId: string): Promise<DagDetailsResponse | undefined> {
  try {
    return await api.request<DagDetailsResponse>("GET", `api/v2/dags/${enc(dagId)}/details`);
  } catch (err) {
    if (err instanceof ApiResponseError && err.status === 404) return undefined;
    throw err;
  }
}

/** The latest version number of a DAG served (not stale), or undefined. */
async function servedVersion(dagId: string): Promise<number | undefined> {
  const dag = await details(dagId);
  return dag && !dag.is_stale ? dag.latest_dag_version?.version_number : undefined;
}

async function folderImportErrors(): Promise<ImportErrorResponse[]> {
  const page = await api.request<{ import_errors: ImportErrorResponse[] }>("GET", "api/v2/importErrors", { query: { limit: 100 } });
  const ours = new Set(broken.map((b) => shown(b.file)));
  return page.import_errors.filter((e) => ours.has(e.filename));
}

async function runState(dagId: string, runId: string): Promise<string | null | undefined> {
  return (await api.request<DagRunResponse>("GET", `api/v2/dags/${enc(dagId)}/dagRuns/${enc(runId)}`)).state;
}

describe("the DAG folder while a world step runs (test stand)", () => {
  useWorldSuite({ wholeWorld: true }); // the step plays a day of a world: made whole first, whatever ran before on this stand
  after(async () => {
    await releasePauses(NOTE).catch(() => undefined);
    for (const f of [...written, `${FIXED}.ts`]) await rm(path.join(folder, f), { force: true });
  });

  it("a file added, changed under a run of version 1, broken four ways, fixed and removed while world_next_day plays a day", async () => {
    await mkdir(folder, { recursive: true });
    const worldVersion = await servedVersion("world_next_day");
    assert.ok(worldVersion !== undefined, "world_next_day is served");
    const probeFile = path.join(folder, `${PROBE}.ts`);

    await playDay(ctx.config, "DAG folder during a world step", 0, "before_insert", async ({ pause, runId }) => {
      await pause.reached();
      const stepStillRunning = async (when: string) => assert.equal(await runState("world_next_day", runId), "running", `world_next_day still running ${when}`);

      // added: served by itself, within the rescan
      const previous = (await details(PROBE))?.latest_dag_version?.version_number ?? 0;
      await writeFile(probeFile, dagFile(PROBE, ["a", "b"], "v1"));
      const v1 = await until(`${PROBE} served`, async () => {
        const v = await servedVersion(PROBE);
        return v !== undefined && v > previous ? v : undefined;
      }, 20_000);

      // changed under a run of version 1, held before its first task
      const [pauseId] = await armRunnerPauses([{ dag: PROBE, task: "a", phase: "before" }], NOTE);
      assert.ok(pauseId !== undefined);
      const run = await api.request<DagRunResponse>("POST", `api/v2/dags/${PROBE}/dagRuns`, { body: { logical_date: null } });
      await pauseReached(pauseId, 60_000);
      await writeFile(probeFile, dagFile(PROBE, ["a", "c"], "v2"));
      await until(`${PROBE} version ${v1 + 1} served`, async () => ((await servedVersion(PROBE)) === v1 + 1 ? true : undefined), 20_000);
      await releasePause(pauseId);
      const ended = await waitForRun(PROBE, run.dag_run_id, 60);
      assert.equal(ended.state, "success");
      assert.deepEqual([ended.dag_versions.map((v) => v.version_number), ended.task_ids], [[v1], ["a", "b"]], "the run kept version 1's graph");
      assert.match(await taskLog(PROBE, run.dag_run_id, "b"), /ran v1/, "and version 1's code");
      const probeDetails = await details(PROBE);
      assert.deepEqual([probeDetails?.bundle_name, probeDetails?.latest_dag_version?.bundle_name], ["stand-dags", "stand-dags"]);
      const ofBundle = async (name: string, n: number) =>
        (await api.request<{ total_entries: number }>("GET", `api/v2/dags/${PROBE}/dagVersions`, { query: { bundle_name: name, version_number: n } })).total_entries;
      assert.deepEqual([await ofBundle("stand-dags", v1), await ofBundle("stand-dags", v1 + 1), await ofBundle("dags-folder", v1 + 1)], [1, 1, 0], "both versions filed under stand-dags");
      assert.equal((await details("world_next_day"))?.latest_dag_version?.bundle_name, "dags-folder");
      await stepStillRunning("after the change");

      // broken four ways: each an import error with its file and line; the rest stays served
      for (const b of broken) await writeFile(path.join(folder, b.file), b.text);
      const errors = await until("four import errors in the stand's folder", async () => {
        const list = await folderImportErrors();
        return list.length === broken.length ? list : undefined;
      }, 60_000);
      for (const b of broken) {
        const e = errors.find((x) => x.filename === shown(b.file));
        assert.ok(e, `an import error for ${b.file}`);
        assert.match(e.stack_trace, b.stack, `${b.file}: ${e.stack_trace}`);
        assert.equal(e.bundle_name, "stand-dags", "the bundle is the folder the file is in");
        const one = await api.request<ImportErrorResponse>("GET", `api/v2/importErrors/${e.import_error_id}`);
        assert.equal(one.filename, e.filename);
      }
      assert.equal(await servedVersion(PROBE), v1 + 1, "the twin does not take the probe's id");
      assert.equal(await servedVersion("world_next_day"), worldVersion, "the world DAG is untouched");
      await stepStillRunning("with four broken files in the folder");

      // fixed: the throwing file now declares a DAG, the others go; no import error is left
      await writeFile(path.join(folder, "zz_throws.ts"), dagFile(FIXED, ["only"], "fixed"));
      for (const b of broken.slice(1)) await unlink(path.join(folder, b.file));
      await until("no import error in the stand's folder", async () => ((await folderImportErrors()).length === 0 ? true : undefined), 60_000);
      assert.ok((await servedVersion(FIXED)) !== undefined, `${FIXED} served from the fixed file`);

      // removed: the DAG goes stale, its run stays readable, a trigger is refused
      await unlink(probeFile);
      await unlink(path.join(folder, "zz_throws.ts"));
      await until(`${PROBE} stale`, async () => ((await details(PROBE))?.is_stale === true ? true : undefined), 20_000);
      assert.equal((await api.request<{ task_instances: TaskInstanceResponse[] }>("GET", `api/v2/dags/${PROBE}/dagRuns/${enc(run.dag_run_id)}/taskInstances`)).task_instances.length, 2);
      await assert.rejects(api.request("POST", `api/v2/dags/${PROBE}/dagRuns`, { body: { logical_date: null } }), (err: unknown) => err instanceof ApiResponseError && err.status === 409);
      await stepStillRunning("after the files were removed");
    });
    assert.equal(await servedVersion("world_next_day"), worldVersion, "world_next_day kept its version through the day");
  });
});
