// The web view of DAG files and versions, on a runner whose DAGs come from a folder of the test's
// own through the real DAG processor: a DAG's page draws its task graph (dependencies, retries,
// timeout, the waiting trigger and the DAG it starts) before its first run; each run shows the
// version it was made from and that version's graph, recoloured live in Chromium as the run goes
// on; the Code view lists the versions with the source of each; a broken file is on the import
// errors page and noticed on the DAG list until it is fixed; a removed file's DAG is marked stale.
import assert from "node:assert/strict";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import type { Page } from "playwright-core";
import { call, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { DEFINE_DAG_IMPORT, dagFile, startFolderMember, stopFolderMember, until, type FolderMember } from "../../testkit/runner/dag-folder.ts";
import { createMigratedTestDatabase, type TestDatabase } from "../../testkit/runner/runner-db.ts";
import { launchChromium, SCREENSHOT_DIR } from "../../testkit/runner/web-app.ts";

const PROBE = "</pre></title><script>window.__xss=1</script>";

/** A parent DAG whose second task is a waiting trigger of `child`; the probe in a comment and the description. */
const PARENT = `${DEFINE_DAG_IMPORT}
// ${PROBE}
export default defineDag({ id: "parent", description: ${JSON.stringify(`starts the child ${PROBE}`)}, schedule: null })
  .task("extract", { retries: 2, retryDelayMs: 30_000, executionTimeoutMs: 300_000 }, () => undefined)
  .waitingTrigger("start_child", { upstream: ["extract"], triggerDagId: "child" })
  .build();
`;

async function page(baseUrl: string, pathname: string): Promise<string> {
  const res = await fetch(`${baseUrl}${pathname}`);
  const text = await res.text();
  assert.equal(res.status, 200, `${pathname}: ${text.slice(0, 300)}`);
  return text;
}

void describe("the web view of DAG files and versions", () => {
  let db: TestDatabase;
  let dir: string;
  let member: FolderMember;
  let api: ApiHarness;
  let sql: pg.Pool;
  let chromium: Awaited<ReturnType<typeof launchChromium>>;
  const problems: string[] = [];
  let firstChildRun = "";

  async function newTab(): Promise<Page> {
    const tab = await chromium.browser.newPage();
    tab.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    tab.on("console", (msg) => {
      if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
    });
    return tab;
  }

  before(async () => {
    db = await createMigratedTestDatabase();
    sql = new pg.Pool({ connectionString: db.url, max: 2 });
    dir = await mkdtemp(path.join(os.tmpdir(), "web-dag-files-"));
    await writeFile(path.join(dir, "parent.ts"), PARENT);
    await writeFile(path.join(dir, "child.ts"), dagFile("child", ["a"], "v1"));
    member = await startFolderMember(db, dir);
    api = await startApi(member.runner);
    chromium = await launchChromium();
  });
  after(async () => {
    await chromium?.close();
    await api?.close();
    if (member) await stopFolderMember(member);
    await sql?.end();
    await rm(dir, { recursive: true, force: true });
    await db?.drop();
  });

  void it("draws a DAG's task graph before its first run: tasks, the edge, retries, timeout, and the DAG a waiting trigger starts", async () => {
    const text = await page(api.baseUrl, "/ui/dags/parent");
    assert.match(text, /No runs yet\./);
    assert.match(text, /<svg class="dag-graph" data-graph="parent"/);
    assert.match(text, /<g class="graph-task kind-callable" data-task="extract" data-retries="2" data-timeout-ms="300000">/);
    assert.match(text, />retries 2 \(every 30\.0 s\)</);
    assert.match(text, />timeout 5 min 0 s</);
    assert.match(text, /<g class="graph-task kind-waitingTrigger" data-task="start_child"/);
    assert.match(text, /data-edge="extract→start_child"/);
    assert.match(text, /<a class="graph-trigger" href="\/ui\/dags\/child" data-triggers="child">/);
    assert.match(text, new RegExp(`file <code>${path.join(dir, "parent.ts").replaceAll("/", "\\/")}</code> · parsed \\d{4}-\\d\\d-\\d\\d [\\d:]+Z · version <a href="/ui/dags/parent/code" id="dag-version">v1</a>`));
    assert.ok(!text.includes("<script>window.__xss"), "the description is escaped");

    const view = (await call<{ tasks: { taskId: string }[]; file: { version: number } }>(api.baseUrl, "GET", "/ui/data/dags/parent")).body;
    assert.deepEqual(view.tasks.map((t) => t.taskId), ["extract", "start_child"]);
    assert.equal(view.file.version, 1);

    const tab = await newTab();
    await tab.goto(`${api.baseUrl}/ui/dags/parent`);
    assert.equal(await tab.locator("svg.dag-graph g.graph-task").count(), 2);
    assert.ok(await tab.locator('svg.dag-graph g[data-task="extract"]').isVisible());
    await tab.screenshot({ path: path.join(SCREENSHOT_DIR, "dag-graph.png"), fullPage: true });
    assert.equal(await tab.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
    await tab.close();
    assert.deepEqual(problems, []);
  });

  void it("a run shows the version it was made from and that version's graph, which the page recolours as the run goes on", async () => {
    const { rows } = await sql.query<{ id: string }>("insert into runner.pause_points (dag_id, task_id, phase, note) values ('child', 'a', 'before', 'web') returning id");
    const pauseId = rows[0]?.id;
    const run = await member.runner.triggerRun("child", { triggeredBy: "test" });
    firstChildRun = run.runId;
    await until("child's task a held at its pause point", async () => (await sql.query("select 1 from runner.pause_points where id = $1 and reached_at is not null", [pauseId])).rowCount === 1);

    const tab = await newTab();
    await tab.goto(`${api.baseUrl}/ui/dags/child/runs/${encodeURIComponent(run.runId)}`);
    assert.equal(await tab.locator("#run-dag-version a").textContent(), "v1");
    assert.equal(await tab.locator("#run-dag-version a").getAttribute("href"), "/ui/dags/child/code?version=1");
    const stripe = tab.locator('#run-graph [data-graph-task="a"]');
    assert.doesNotMatch((await stripe.getAttribute("class")) ?? "", /state-success/);
    await sql.query("update runner.pause_points set released_at = now() where id = $1", [pauseId]);
    await tab.waitForSelector('#run-graph [data-graph-task="a"].state-success', { timeout: 15_000 });
    await tab.close();
    assert.equal((await member.runner.waitForRun("child", run.runId, { timeoutMs: 20_000 })).state, "success");
    assert.deepEqual(problems, []);
  });

  void it("a changed file is version 2: the grid marks each run's version, an old run keeps version 1's graph, the Code view shows each version's source", async () => {
    await writeFile(path.join(dir, "child.ts"), dagFile("child", ["a", "b"], "v2"));
    await until("child version 2", async () => ((await member.runner.getDag("child")).latestVersion?.versionNumber === 2 ? true : undefined));
    const second = await member.runner.triggerRun("child", { triggeredBy: "test" });
    await member.runner.waitForRun("child", second.runId, { timeoutMs: 20_000 });

    const grid = await page(api.baseUrl, "/ui/dags/child");
    assert.deepEqual([...grid.matchAll(/<span class="run-version">(v\d+)<\/span>/g)].map((m) => m[1]), ["v1", "v2"]);
    assert.match(grid, /data-edge="a→b"/);
    const oldRun = await page(api.baseUrl, `/ui/dags/child/runs/${encodeURIComponent(firstChildRun)}`);
    const oldGraph = oldRun.slice(oldRun.indexOf('id="run-graph"'));
    assert.match(oldGraph, /data-task="a"/);
    assert.doesNotMatch(oldGraph, /data-task="b"/, "the v1 run's graph has no task b");
    assert.match(await page(api.baseUrl, `/ui/dags/child/runs/${encodeURIComponent(second.runId)}`), /id="run-graph"[\s\S]*data-task="b"/);

    const code = await page(api.baseUrl, "/ui/dags/child/code");
    assert.deepEqual([...code.matchAll(/<tr data-version="(\d+)"/g)].map((m) => m[1]), ["2", "1"]);
    assert.match(code, /<pre class="source" id="dag-source" data-version="2">[\s\S]*ran v2/);
    const v1 = await page(api.baseUrl, "/ui/dags/child/code?version=1");
    assert.match(v1, /<pre class="source" id="dag-source" data-version="1">[\s\S]*ran v1/);
    assert.doesNotMatch(v1, /ran v2/);

    const missing = await fetch(`${api.baseUrl}/ui/dags/child/code?version=9`);
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /no version 9/);
    const bad = await fetch(`${api.baseUrl}/ui/dags/child/code?version=first`);
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /version/);

    // the ended v1 run offers to move to v2; the v2 run does not
    assert.match(oldRun, /<button [^>]*id="clear-on-latest"[^>]*>Clear on latest version \(v2\)<\/button>/);
    assert.doesNotMatch(await page(api.baseUrl, `/ui/dags/child/runs/${encodeURIComponent(second.runId)}`), /clear-on-latest/);
    const tab = await newTab();
    await tab.goto(`${api.baseUrl}/ui/dags/child/runs/${encodeURIComponent(firstChildRun)}`);
    await tab.click("#clear-on-latest");
    await tab.waitForSelector('.run-action-result:has-text("moved to the latest version; cleared b")', { timeout: 10_000 });
    await tab.close();
    const moved = await member.runner.waitForRun("child", firstChildRun, { timeoutMs: 20_000 });
    assert.deepEqual([moved.state, moved.dagVersion?.versionNumber, moved.manifest], ["success", 2, ["a", "b"]]);
    const movedPage = await page(api.baseUrl, `/ui/dags/child/runs/${encodeURIComponent(firstChildRun)}`);
    assert.match(movedPage, /id="run-graph"[\s\S]*data-task="b"/, "the moved run draws version 2's graph");
    assert.doesNotMatch(movedPage, /clear-on-latest/);
    const audit = await call<{ event_logs: { owner: string; run_id: string; extra: string }[] }>(api.baseUrl, "GET", "/api/v2/eventLogs?event=web_clear_task_instances");
    assert.deepEqual(audit.body.event_logs.map((e) => [e.owner, e.run_id]), [["web", firstChildRun]], "the page action is in the event log");
    assert.match(audit.body.event_logs[0]?.extra ?? "", /"run_on_latest_version":true/);
    assert.deepEqual(problems, []);
  });

  void it("shows a file's source escaped: what a DAG file says never becomes markup", async () => {
    const code = await page(api.baseUrl, "/ui/dags/parent/code");
    assert.ok(code.includes("// &lt;/pre&gt;&lt;/title&gt;&lt;script&gt;window.__xss=1&lt;/script&gt;"), "the comment is shown as text");
    assert.ok(!code.includes("<script>window.__xss"));
    const tab = await newTab();
    await tab.goto(`${api.baseUrl}/ui/dags/parent/code`);
    assert.match((await tab.locator("#dag-source").textContent()) ?? "", /<script>window\.__xss=1<\/script>/);
    assert.equal(await tab.evaluate(() => (window as unknown as { __xss?: unknown }).__xss), undefined);
    await tab.close();
    assert.deepEqual(problems, []);
  });

  void it("lists a broken file on the import errors page, notices it on the DAG list and the DAG's page, and drops both once it is fixed", async () => {
    await writeFile(path.join(dir, "broken.ts"), `const n = 2;\nthrow new Error("broken on purpose " + n);\n`);
    await writeFile(path.join(dir, "child.ts"), `${DEFINE_DAG_IMPORT}\nexport default defineDag({ id: "child" }).task(\n`);
    await until("two import errors", async () => ((await member.runner.listImportErrors()).length === 2 ? true : undefined), 20_000);

    const list = await page(api.baseUrl, "/ui/");
    assert.match(list, /<p class="notice import-error-notice" id="import-error-notice">2 DAG files do not import:/);
    assert.match(list, /<tr data-dag-row="child">[\s\S]*?class="badge import-error-badge" href="\/ui\/import-errors"/);
    const errors = await page(api.baseUrl, "/ui/import-errors");
    assert.match(errors, new RegExp(`data-file="${path.join(dir, "broken.ts").replaceAll("/", "\\/")}"`));
    assert.match(errors, /broken on purpose 2[\s\S]*broken\.ts:2:7/);
    assert.match(errors, /child\.ts:\d+:\d+/);
    const dagPage = await page(api.baseUrl, "/ui/dags/child");
    assert.match(dagPage, /id="dag-import-error">Its file <code>[^<]*child\.ts<\/code> does not import now/);
    assert.match(dagPage, /data-edge="a→b"/, "the DAG keeps its last good version's graph");

    await unlink(path.join(dir, "broken.ts"));
    await writeFile(path.join(dir, "child.ts"), dagFile("child", ["a", "b"], "v2"));
    await until("no import errors", async () => ((await member.runner.listImportErrors()).length === 0 ? true : undefined), 20_000);
    assert.doesNotMatch(await page(api.baseUrl, "/ui/"), /import-error-notice|import-error-badge/);
    assert.match(await page(api.baseUrl, "/ui/import-errors"), /Every DAG file imports\./);
    assert.doesNotMatch(await page(api.baseUrl, "/ui/dags/child"), /dag-import-error/);
  });

  void it("marks a removed file's DAG stale on the list and its page, with its runs still shown", async () => {
    await unlink(path.join(dir, "child.ts"));
    await until("child stale", async () => ((await member.runner.getDag("child")).isStale ? true : undefined));
    assert.match(await page(api.baseUrl, "/ui/"), /<tr data-dag-row="child">[\s\S]*?<span class="badge stale-badge">stale<\/span>/);
    const dagPage = await page(api.baseUrl, "/ui/dags/child");
    assert.match(dagPage, /<h1>child <span class="badge stale-badge">stale<\/span><\/h1>/);
    assert.match(dagPage, /id="stale-notice">Stale: /);
    assert.equal([...dagPage.matchAll(/<span class="run-version">/g)].length, 2, "both runs still on the grid");
  });
});
