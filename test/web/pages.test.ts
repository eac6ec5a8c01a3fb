// Every page of the web view in a real browser, on runs the engine really made: the DAG list's
// squares, the grid and its paging, a run's tries and logs, the links between a waiting trigger
// and its child run (both ways), variables with history, the schema page, and a 404 page.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { GRID_RUNS_PER_PAGE } from "../../src/web/pages/dag-grid.ts";
import type { DagRunRecord } from "../../src/runner/types.ts";
import { call } from "../../testkit/runner/api-app.ts";
import { triggerAndWait } from "../../testkit/runner/runner-db.ts";
import { useWebStand } from "../../testkit/runner/web-app.ts";
import { LABEL_VARIABLE } from "../../testkit/runner/web-dags.ts";

const QUICK_RUNS = GRID_RUNS_PER_PAGE + 2;

void describe("web view pages in Chromium", () => {
  const stand = useWebStand();
  let page: Page;
  let okRun: DagRunRecord;
  let flakyRun: DagRunRecord;
  let parentRun: DagRunRecord;

  before(async () => {
    okRun = await triggerAndWait(stand.runner, "web_ok", { days: 3, label: "first label" });
    flakyRun = await triggerAndWait(stand.runner, "web_flaky");
    parentRun = await triggerAndWait(stand.runner, "web_parent");
    const quick = await Promise.all(
      Array.from({ length: QUICK_RUNS }, () => stand.runner.triggerRun("web_quick", { triggeredBy: "test" })),
    );
    await Promise.all(quick.map((run) => stand.runner.waitForRun("web_quick", run.runId, { timeoutMs: 30_000 })));
    page = await stand.newPage();
  });

  void it("the DAG list shows every DAG with its runs as coloured squares, its switch and description as text", async () => {
    await page.goto(`${stand.baseUrl}/`);
    assert.equal(new URL(page.url()).pathname, "/ui/");
    const rows = await page.locator("tr[data-dag-row]").evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-dag-row")));
    assert.deepEqual(rows, ["web_child", "web_flaky", "web_ok", "web_parent", "web_quick"]);
    const okSquares = page.locator('[data-squares-for="web_ok"] .sq');
    assert.equal(await okSquares.count(), 1);
    assert.match((await okSquares.first().getAttribute("class")) ?? "", /state-success/);
    assert.equal(await page.locator('[data-squares-for="web_quick"] .sq.state-success').count(), 10, "the last 10 runs only");
    assert.equal(await page.locator('tr[data-dag-row="web_ok"] .description').textContent(), "two tasks in a row <i>not italic</i>");
    assert.equal(await page.locator('tr[data-dag-row="web_ok"] .pause-switch').isChecked(), true);
    assert.match((await page.locator("#live-status").textContent()) ?? "", /^$|nothing running/);
    await stand.screenshot(page, "dag-list");
  });

  void it("a DAG page shows runs by tasks, coloured by task state, paged by runs", async () => {
    await page.goto(`${stand.baseUrl}/ui/dags/web_ok`);
    const okCells = await page.locator("#grid tbody tr").evaluateAll((rows) =>
      rows.map((row) => [row.getAttribute("data-task"), row.querySelector("td a")?.getAttribute("data-state")]),
    );
    assert.deepEqual(okCells, [["extract", "success"], ["load", "success"]]);
    await stand.screenshot(page, "dag-grid");

    await page.goto(`${stand.baseUrl}/ui/dags/web_quick`);
    assert.equal(await page.locator("#grid thead th.run-col").count(), GRID_RUNS_PER_PAGE);
    assert.equal(await page.locator(".pager-range").textContent(), `runs 1–${GRID_RUNS_PER_PAGE} of ${QUICK_RUNS}`);
    await page.locator('.pager a[rel="next"]').click();
    await page.waitForURL(/offset=25/);
    assert.equal(await page.locator("#grid thead th.run-col").count(), QUICK_RUNS - GRID_RUNS_PER_PAGE);
    assert.equal(await page.locator("#grid tbody a.cell.state-success").count(), QUICK_RUNS - GRID_RUNS_PER_PAGE);
  });

  void it("a grid cell opens the run page at that task; each try's log can be chosen", async () => {
    await page.goto(`${stand.baseUrl}/ui/dags/web_flaky`);
    await page.locator('#grid tr[data-task="wobble"] a.cell').click();
    await page.waitForURL(/task=wobble/);
    assert.equal(await page.locator("#run-state .badge").textContent(), "success");
    assert.equal(await page.locator('#tasks tr[data-task="wobble"] td.num').first().textContent(), "2/2");
    assert.match((await page.locator("#log-lines").textContent()) ?? "", /wobble try 2/);
    const width = Number(await page.locator('#tasks tr[data-task="wobble"] svg rect').getAttribute("width"));
    assert.ok(width > 0 && width <= 100, `bar width ${width}`);
    await stand.screenshot(page, "run-try-2");

    await page.locator(".tries a", { hasText: "try 1" }).click();
    await page.waitForURL(/try=1/);
    const firstTry = (await page.locator("#log-lines").textContent()) ?? "";
    assert.match(firstTry, /wobble try 1/);
    assert.doesNotMatch(firstTry, /wobble try 2/);
    assert.equal(await page.locator(".tries strong").textContent(), "try 1");
    assert.equal(flakyRun.state, "success");
  });

  void it("a waiting trigger links to its child run, and the child run links back to the parent run and task", async () => {
    await page.goto(`${stand.baseUrl}/ui/dags/web_parent/runs/${encodeURIComponent(parentRun.runId)}`);
    const childLink = page.locator('#tasks tr[data-task="wait_child"] a.child-run-link');
    assert.match((await childLink.textContent()) ?? "", /^child run web_child \/ triggered__/);
    await stand.screenshot(page, "run-parent");
    await childLink.click();
    await page.waitForURL(/\/ui\/dags\/web_child\/runs\//);
    assert.equal(await page.locator("#run-state .badge").textContent(), "success");
    const parentLink = page.locator("#parent-run-link");
    assert.equal(await parentLink.textContent(), `web_parent / ${parentRun.runId} / wait_child`);
    await stand.screenshot(page, "run-child");
    await parentLink.click();
    await page.waitForURL(/\/ui\/dags\/web_parent\/runs\/.*task=wait_child/);
    assert.equal(await page.locator("#tasks tr.selected").getAttribute("data-task"), "wait_child");
  });

  void it("the run page shows conf, task bars on one axis and the chosen task's log", async () => {
    await page.goto(`${stand.baseUrl}/ui/dags/web_ok/runs/${encodeURIComponent(okRun.runId)}?task=extract`);
    assert.deepEqual(JSON.parse((await page.locator("#run-conf").textContent()) ?? ""), { days: 3, label: "first label" });
    const bars = await page.locator("#tasks svg rect").evaluateAll((rects) =>
      rects.map((rect) => ({ x: Number(rect.getAttribute("x")), width: Number(rect.getAttribute("width")) })),
    );
    assert.equal(bars.length, 2);
    const [extract, load] = bars as [{ x: number; width: number }, { x: number; width: number }];
    assert.ok(load.x >= extract.x + extract.width - 1, `load starts after extract ends: ${JSON.stringify(bars)}`);
    assert.equal(await page.locator("#time-axis span").count(), 5);
    assert.match((await page.locator("#log-lines").textContent()) ?? "", /label=first label days=3/);
    await stand.screenshot(page, "run");
  });

  void it("variables show their values and each change: who, when, which run", async () => {
    await stand.runner.setVariable("web_note", "hand-set", { changedBy: "api:test", description: "set by the test" });
    await stand.runner.setVariable("web_note", "changed", { changedBy: "api:test" });
    await page.goto(`${stand.baseUrl}/ui/variables`);
    const labelSection = page.locator(`section[data-variable="${LABEL_VARIABLE}"]`);
    assert.equal(await labelSection.locator("p code.value").textContent(), "first label");
    const changeRow = labelSection.locator("table.changes tbody tr").first();
    assert.match((await changeRow.textContent()) ?? "", new RegExp(`run:web_ok/${okRun.runId.replace(/[.+]/g, "\\$&")}/load`));
    assert.equal(await changeRow.locator("a").textContent(), `web_ok / ${okRun.runId}`);
    assert.equal(await page.locator('section[data-variable="web_note"] table.changes tbody tr').count(), 2);
    await stand.screenshot(page, "variables");

    await page.locator('section[data-variable="web_note"] h2 a').click();
    await page.waitForURL(/\/ui\/variables\/web_note$/);
    const values = await page.locator("table.changes tbody tr td:last-child").allTextContents();
    assert.deepEqual(values, ["changed", "hand-set"], "newest first");
    await stand.screenshot(page, "variable-history");
  });

  void it("the schema page shows what GET /api/v2/system/schema answers", async () => {
    type Status = { status: string; files: { file: string }[]; catalogue: { missing: { detail: string }[] }; detail?: string };
    const api = await call<Status>(stand.baseUrl, "GET", "/api/v2/system/schema");
    await page.goto(`${stand.baseUrl}/ui/schema`);
    assert.equal(await page.locator("#schema-not-available").count(), 0, "the API has the route now");
    if (api.status === 200) {
      assert.match((await page.locator("#schema-status > dl > dt").first().textContent()) ?? "", /^status$/);
      assert.equal(await page.locator("#schema-status > dl > dd").first().textContent(), api.body.status);
      // the files table comes first; whatever the test stand's world is now, a catalogue drift (its
      // own table) is shown as the API answers it
      const tables = page.locator("#schema-status table");
      const files = await tables.first().locator("tbody tr td:first-child").allTextContents();
      assert.deepEqual(files, api.body.files.map((f) => f.file));
      const missing = api.body.catalogue.missing;
      if (missing.length > 0) {
        const shown = await tables.nth(1).locator("tbody tr").allTextContents();
        assert.equal(shown.length, missing.length);
        assert.ok(shown.every((row, i) => row.includes(missing[i]?.detail ?? "?")));
      }
    } else {
      const error = (await page.locator("#schema-error").textContent()) ?? "";
      assert.ok(error.includes(`(${api.status})`) && error.includes(api.body.detail ?? ""), error);
    }
    await stand.screenshot(page, "schema");
  });

  void it("an unknown DAG or run is a 404 page naming it", async () => {
    const problemsBefore = stand.pageProblems.length;
    const response = await page.goto(`${stand.baseUrl}/ui/dags/no_such_dag`);
    assert.equal(response?.status(), 404);
    assert.match((await page.locator("#error-detail").textContent()) ?? "", /no_such_dag/);
    const missingRun = await page.goto(`${stand.baseUrl}/ui/dags/web_ok/runs/nope`);
    assert.equal(missingRun?.status(), 404);
    assert.match((await page.locator("#error-detail").textContent()) ?? "", /nope/);
    await stand.screenshot(page, "not-found");
    // the browser logs the two 404 documents themselves; those are expected
    const logged = stand.pageProblems.splice(problemsBefore);
    assert.deepEqual(logged, Array(2).fill("console: Failed to load resource: the server responded with a status of 404 (Not Found)"));
  });

  void it("no page logged an error or a CSP violation", () => {
    assert.deepEqual(stand.pageProblems, []);
  });
});
