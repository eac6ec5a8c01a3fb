// The DAG processor on a folder of its own and a database of its own: a file added appears, a
// changed one is a new version, a broken one (a throw, a syntax error, a top level that never ends,
// a DAG id another file owns) is an import error naming its file and line while the other DAGs stay
// served, a fixed one comes back, a removed one goes stale with its history kept, and a run made
// from version 1 ends on version 1's graph and code after the file changed under it. With two
// runners, one parses; when it stops, the other takes over.
import assert from "node:assert/strict";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { DagStaleError } from "../../src/runner/index.ts";
import { DEFINE_DAG_IMPORT, dagFile, startFolderMember as startMember, stopFolderMember as stopMember, until, type FolderMember as Member } from "../../testkit/runner/dag-folder.ts";
import { createMigratedTestDatabase, type TestDatabase } from "../../testkit/runner/runner-db.ts";

void describe("the DAG folder (Airflow's DAG processor)", () => {
  let db: TestDatabase;
  let dir: string;
  let member: Member;
  let sql: pg.Pool;

  before(async () => {
    db = await createMigratedTestDatabase();
    sql = new pg.Pool({ connectionString: db.url, max: 2 });
    dir = await mkdtemp(path.join(os.tmpdir(), "dag-folder-"));
    await writeFile(path.join(dir, "steady.ts"), dagFile("steady", ["one"], "steady"));
    member = await startMember(db, dir);
  });
  after(async () => {
    await stopMember(member);
    await sql.end();
    await rm(dir, { recursive: true, force: true });
    await db.drop();
  });

  void it("serves the folder's DAG at start, as version 1 with its file and parse time", async () => {
    const dag = await member.runner.getDag("steady");
    assert.equal(dag.latestVersion?.versionNumber, 1);
    assert.equal(dag.fileloc, path.join(dir, "steady.ts"));
    assert.equal(dag.isStale, false);
    assert.ok(dag.lastParsedTime instanceof Date);
    assert.deepEqual(dag.tasks.map((t) => t.taskId), ["one"]);
  });

  void it("shows a file dropped in the folder by itself, without a restart", async () => {
    await writeFile(path.join(dir, "zz_probe.ts"), dagFile("zz_probe", ["a", "b"], "v1"));
    await until("zz_probe served", () => member.runner.registry.has("zz_probe"));
    const dag = await member.runner.getDag("zz_probe");
    assert.equal(dag.latestVersion?.versionNumber, 1);
    assert.deepEqual(dag.tasks.map((t) => [t.taskId, t.upstream, t.retries]), [["a", [], 0], ["b", ["a"], 1]]);
  });

  void it("a run made from version 1 runs version 1's graph and code to its end after the file changed under it", async () => {
    const { rows } = await sql.query<{ id: string }>("insert into runner.pause_points (dag_id, task_id, phase, note) values ('zz_probe', 'a', 'before', 'v1 run') returning id");
    const pauseId = rows[0]?.id;
    const first = await member.runner.triggerRun("zz_probe", { triggeredBy: "test" });
    assert.equal(first.dagVersion?.versionNumber, 1);
    await until("the v1 run's task a held at its pause point", async () => (await sql.query("select 1 from runner.pause_points where id = $1 and reached_at is not null", [pauseId])).rowCount === 1);

    // version 2: task b removed, task c added, another mark in the code
    await writeFile(path.join(dir, "zz_probe.ts"), dagFile("zz_probe", ["a", "c"], "v2"));
    await until("zz_probe version 2 served", async () => ((await member.runner.getDag("zz_probe")).latestVersion?.versionNumber === 2 ? true : undefined));
    await sql.query("update runner.pause_points set released_at = now() where id = $1", [pauseId]);

    const ended = await member.runner.waitForRun("zz_probe", first.runId, { timeoutMs: 20_000 });
    assert.equal(ended.state, "success");
    assert.equal(ended.dagVersion?.versionNumber, 1, "the run keeps the version it was made from");
    assert.deepEqual((await member.runner.listTaskInstances("zz_probe", first.runId)).map((ti) => ti.taskId), ["a", "b"]);
    const log = await member.runner.getTaskLog("zz_probe", first.runId, "b", 1);
    assert.ok(log.lines.some((l) => l.message === "ran v1"), `task b ran version 1's code: ${JSON.stringify(log.lines)}`);

    const second = await member.runner.triggerRun("zz_probe", { triggeredBy: "test" });
    const secondEnded = await member.runner.waitForRun("zz_probe", second.runId, { timeoutMs: 20_000 });
    assert.equal(secondEnded.dagVersion?.versionNumber, 2);
    assert.deepEqual((await member.runner.listTaskInstances("zz_probe", second.runId)).map((ti) => ti.taskId), ["a", "c"]);
    const log2 = await member.runner.getTaskLog("zz_probe", second.runId, "c", 1);
    assert.ok(log2.lines.some((l) => l.message === "ran v2"));

    const versions = await member.runner.listDagVersions("zz_probe", { limit: 10, offset: 0 });
    assert.deepEqual(versions.items.map((v) => v.versionNumber), [1, 2]);
    assert.match((await member.runner.getDagSource("zz_probe", 1)).content ?? "", /ran v1/);
    assert.match((await member.runner.getDagSource("zz_probe", 2)).content ?? "", /ran v2/);
  });

  const broken: { name: string; text: string; line: RegExp }[] = [
    { name: "throws", text: `const n = 1;\nthrow new Error("broken on purpose " + n);\n`, line: /broken on purpose 1[\s\S]*throws\.ts:2:7/ },
    { name: "does not compile", text: `${DEFINE_DAG_IMPORT}\nconst a = ;\n`, line: /^SyntaxError: .*compiles\.ts:2:11/ },
    { name: "loops forever", text: `let i = 0;\nwhile (i >= 0) { i = (i + 1) % 10; }\nexport default 1;\n`, line: /did not finish within 2 s[\s\S]*loops\.ts:2:/ },
    { name: "declares an id another file owns", text: dagFile("steady", ["x"], "twin"), line: /declares DAG 'steady', which .*steady\.ts already declares/ },
  ];
  const fileOf = (name: string) => ({ throws: "throws.ts", "does not compile": "compiles.ts", "loops forever": "loops.ts", "declares an id another file owns": "twin.ts" })[name] ?? "x.ts";

  void it("lists a file that throws, does not compile, loops forever or takes a DAG id as an import error, and keeps serving the rest", async () => {
    for (const b of broken) await writeFile(path.join(dir, fileOf(b.name)), b.text);
    const errors = await until("four import errors", async () => {
      const list = await member.runner.listImportErrors();
      return list.length === 4 ? list : undefined;
    }, 20_000);
    for (const b of broken) {
      const e = errors.find((x) => x.filename === path.join(dir, fileOf(b.name)));
      assert.ok(e, `an import error for the file that ${b.name}`);
      assert.match(e.stackTrace, b.line, `the file that ${b.name}: ${e.stackTrace}`);
    }
    assert.deepEqual(member.runner.registry.list().map((d) => d.id), ["steady", "zz_probe"]);
    assert.equal((await member.runner.getDag("steady")).latestVersion?.versionNumber, 1, "the owner's DAG is untouched by the twin");

    // the next scan parses only the new file: an unchanged broken one keeps its error unparsed (the
    // loop would cost the 2 s timeout on every scan)
    const parses = member.processor.isolatedParses;
    await writeFile(path.join(dir, "zz_next.ts"), dagFile("zz_next", ["n"], "next"));
    await until("zz_next served", () => member.runner.registry.has("zz_next"));
    assert.equal(member.processor.isolatedParses - parses, 1, "one parse: the new file's");
    assert.equal((await member.runner.listImportErrors()).length, 4, "the broken files are still listed");
    await unlink(path.join(dir, "zz_next.ts"));
    await until("zz_next gone", () => !member.runner.registry.has("zz_next"));
    const run = await member.runner.triggerRun("steady", { triggeredBy: "test" });
    assert.equal((await member.runner.waitForRun("steady", run.runId, { timeoutMs: 20_000 })).state, "success");
  });

  void it("a broken DAG file keeps its DAG's last version; fixed, its import error goes", async () => {
    await writeFile(path.join(dir, "zz_probe.ts"), `throw new Error("half-saved");\n`);
    await until("zz_probe's file listed as broken", async () => ((await member.runner.listImportErrors()).some((e) => e.filename.endsWith("zz_probe.ts")) ? true : undefined));
    const kept = await member.runner.getDag("zz_probe");
    assert.equal(kept.hasImportErrors, true);
    assert.equal(kept.isStale, false);
    assert.equal(kept.latestVersion?.versionNumber, 2);
    assert.ok(member.runner.registry.has("zz_probe"), "still served from its last version");

    for (const b of broken) await unlink(path.join(dir, fileOf(b.name)));
    await writeFile(path.join(dir, "zz_probe.ts"), dagFile("zz_probe", ["a", "c"], "v2"));
    await until("no import errors", async () => ((await member.runner.listImportErrors()).length === 0 ? true : undefined));
    const fixed = await member.runner.getDag("zz_probe");
    assert.equal(fixed.hasImportErrors, false);
    assert.equal(fixed.latestVersion?.versionNumber, 2, "the same code again is the same version");
  });

  void it("a removed file's DAG goes stale: its runs stay readable, a new one is refused", async () => {
    await unlink(path.join(dir, "zz_probe.ts"));
    await until("zz_probe no longer served", () => !member.runner.registry.has("zz_probe"));
    const stale = await member.runner.getDag("zz_probe");
    assert.equal(stale.isStale, true);
    assert.ok((await member.runner.listRuns("zz_probe", { limit: 10, offset: 0 })).totalEntries >= 2);
    await assert.rejects(member.runner.triggerRun("zz_probe", { triggeredBy: "test" }), DagStaleError);
  });

  void it("a failed run cleared onto the latest version: a task that version dropped ends removed, one it adds runs, the run succeeds on it", async () => {
    const file = path.join(dir, "moving.ts");
    const v1 = `${DEFINE_DAG_IMPORT}\nexport default defineDag({ id: "moving", schedule: null })
  .task("extract", (ctx) => { ctx.log.info("extract v1"); })
  .task("load_old", { upstream: ["extract"] }, () => { throw new Error("load_old is broken"); })
  .task("report", { upstream: ["load_old"] }, (ctx) => { ctx.log.info("report v1"); })
  .build();\n`;
    const v2 = `${DEFINE_DAG_IMPORT}\nexport default defineDag({ id: "moving", schedule: null })
  .task("extract", (ctx) => { ctx.log.info("extract v2"); })
  .task("load_new", { upstream: ["extract"], retries: 2 }, (ctx) => { ctx.log.info("load_new v2"); })
  .task("report", { upstream: ["load_new"] }, (ctx) => { ctx.log.info("report v2"); })
  .build();\n`;
    await writeFile(file, v1);
    await until("moving served", () => member.runner.registry.has("moving"));
    const run = await member.runner.triggerRun("moving", { triggeredBy: "test" });
    const failed = await member.runner.waitForRun("moving", run.runId, { timeoutMs: 20_000 });
    assert.equal(failed.state, "failed");
    const clear = { runId: run.runId, taskIds: null, onlyFailed: true, includeDownstream: true, includeUpstream: false, by: "test" };

    // not ended: refused, nothing moved (a paused DAG's run stays queued)
    await member.runner.setPaused("moving", true);
    const queued = await member.runner.triggerRun("moving", { triggeredBy: "test" });
    await writeFile(file, v2);
    await until("moving version 2 served", async () => ((await member.runner.getDag("moving")).latestVersion?.versionNumber === 2 ? true : undefined));
    await assert.rejects(member.runner.clearTaskInstances("moving", { ...clear, runId: queued.runId, dryRun: false, runOnLatestVersion: true }), (err: Error) => {
      assert.equal(err.name, "RunNotRebindableError");
      assert.match(err.message, new RegExp(`run ${queued.runId} of DAG moving is queued: only an ended run moves to the latest version`));
      return true;
    });
    assert.equal((await member.runner.getRun("moving", queued.runId)).dagVersion?.versionNumber, 1);
    await member.runner.patchRun("moving", queued.runId, { state: "failed" }, { by: "test" });
    await member.runner.setPaused("moving", false);

    // a dry run lists what the move would run, and changes nothing
    const dry = await member.runner.clearTaskInstances("moving", { ...clear, dryRun: true, runOnLatestVersion: true });
    assert.deepEqual(dry.map((ti) => [ti.taskId, ti.state]).sort(), [["load_new", "scheduled"], ["report", "upstream_failed"]]);
    assert.equal((await member.runner.getRun("moving", run.runId)).dagVersion?.versionNumber, 1, "a dry run does not move the run");
    assert.deepEqual((await member.runner.listTaskInstances("moving", run.runId)).map((ti) => [ti.taskId, ti.state]), [["extract", "success"], ["load_old", "failed"], ["report", "upstream_failed"]]);

    // cleared for real: the run moves, then runs on version 2
    await member.runner.clearTaskInstances("moving", { ...clear, dryRun: false, runOnLatestVersion: true });
    const ended = await member.runner.waitForRun("moving", run.runId, { timeoutMs: 20_000 });
    assert.equal(ended.state, "success", "removed is terminal: the run ends on version 2's graph");
    assert.equal(ended.dagVersion?.versionNumber, 2);
    assert.deepEqual(ended.manifest, ["extract", "load_new", "report"]);
    assert.match(ended.note ?? "", /moved from version 1 to 2 by test; removed: load_old; added: load_new/);
    const tis = new Map((await member.runner.listTaskInstances("moving", run.runId)).map((ti) => [ti.taskId, ti]));
    assert.deepEqual([...tis.keys()].sort(), ["extract", "load_new", "load_old", "report"]);
    assert.equal(tis.get("load_old")?.state, "removed");
    assert.match(tis.get("load_old")?.error ?? "", /version 2 of DAG moving has no task load_old .*it was failed/);
    assert.equal(tis.get("load_old")?.tryNumber, 1, "its try stays in its history");
    assert.match((await member.runner.getTaskLog("moving", run.runId, "load_old", 1)).lines.map((l) => l.message).join("\n"), /load_old is broken[\s\S]*removed by test/);
    assert.deepEqual([tis.get("extract")?.state, tis.get("extract")?.tryNumber], ["success", 1], "a kept task that succeeded is not run again");
    assert.deepEqual([tis.get("load_new")?.state, tis.get("load_new")?.tryNumber, tis.get("load_new")?.maxTries], ["success", 1, 3], "an added task runs with version 2's retries");
    assert.deepEqual([tis.get("report")?.state, tis.get("report")?.tryNumber], ["success", 1]);
    assert.ok((await member.runner.getTaskLog("moving", run.runId, "report", 1)).lines.some((l) => l.message === "report v2"), "the kept task ran version 2's code");

    // the run is on the latest version now: asked again, nothing moves
    const again = await member.runner.clearTaskInstances("moving", { ...clear, dryRun: true, runOnLatestVersion: true });
    assert.deepEqual(again, []);
    await unlink(file);
    await until("moving no longer served", () => !member.runner.registry.has("moving"));
  });

  void it("with two runners one parses; when it stops, the other parses the next file", async () => {
    const second = await startMember(db, dir);
    try {
      assert.equal(member.processor.isLeader, true);
      assert.equal(second.processor.isLeader, false);
      assert.deepEqual(second.runner.registry.list().map((d) => d.id), ["steady"], "the second runner reads what the first parsed");
      assert.equal(second.runner.registry.currentVersion("steady"), member.runner.registry.currentVersion("steady"));
      await stopMember(member);
      await until("the second runner parses", () => second.processor.isLeader);
      await writeFile(path.join(dir, "late.ts"), dagFile("late", ["only"], "late"));
      await until("late served by the second runner", () => second.runner.registry.has("late"));
    } finally {
      await stopMember(second);
      member = await startMember(db, dir); // for after()
    }
  });
});
