// Page actions and live refresh in a real browser: a run triggered from the page turns green on
// the page without a reload; the conf editor is checked in the page and again by the server, with
// the error beside the field; the pause switch changes what the API reports; and the action
// endpoints refuse requests that do not come from this runner's own pages.
import assert from "node:assert/strict";
import { request } from "node:http";
import { before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import type { DagResponse, DagRunResponse } from "../../src/api/schemas.ts";
import { call } from "../../testkit/runner/api-app.ts";
import { useWebStand, type WebStand } from "../../testkit/runner/web-app.ts";

interface RawAnswer {
  status: number;
  body: { detail?: string; field?: string };
}

/** A POST with exactly the headers given (fetch would not let a test set Host). */
function rawPost(baseUrl: string, path: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method: "POST", headers: { ...headers, "Content-Length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || "{}") as RawAnswer["body"] }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function dagIsPaused(stand: WebStand, dagId: string): Promise<boolean> {
  const answer = await call<DagResponse>(stand.baseUrl, "GET", `/api/v2/dags/${dagId}`);
  return answer.body.is_paused;
}

async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => Object.assign(window, { __sameDocument: "not reloaded" }));
}

async function documentWasKept(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { __sameDocument?: string }).__sameDocument === "not reloaded");
}

void describe("web view actions and live refresh in Chromium", () => {
  const stand = useWebStand();
  let page: Page;
  const actionRequests: string[] = [];

  before(async () => {
    page = await stand.newPage();
    page.on("request", (req) => {
      if (req.url().includes("/ui/actions/")) actionRequests.push(req.url());
    });
  });

  void it("a run triggered from the DAG list shows running, then green, without a reload", async () => {
    await page.goto(`${stand.baseUrl}/ui/`);
    await markDocument(page);
    const row = page.locator('tr[data-dag-row="web_ok"]');
    await row.locator("details.trigger summary").click();
    await row.locator("textarea").fill('{"days": 2, "napMs": 2500}');
    await row.locator('button[type="submit"]').click();
    const runId = (await row.locator(".new-run-link").textContent({ timeout: 5000 })) ?? "";
    assert.match(runId, /^manual__/);

    const square = row.locator(`.sq[data-run="${runId}"]`);
    await square.and(page.locator(".state-running")).waitFor({ timeout: 10_000 });
    assert.match((await page.locator("#live-status").textContent()) ?? "", /live: refreshing/);
    await stand.screenshot(page, "dag-list-running");
    await square.and(page.locator(".state-success")).waitFor({ timeout: 20_000 });
    assert.ok(await documentWasKept(page), "the page was reloaded");
    await page.locator("#live-status", { hasText: "nothing running" }).waitFor({ timeout: 5000 });

    const run = await call<DagRunResponse>(stand.baseUrl, "GET", `/api/v2/dags/web_ok/dagRuns/${encodeURIComponent(runId)}`);
    assert.equal(run.body.state, "success");
    assert.equal(run.body.triggered_by, "ui"); // Airflow's name for a run triggered from the web view
    assert.deepEqual(run.body.conf, { days: 2, napMs: 2500 });
  });

  void it("the run page's buttons mark a running run failed, then clear its failed tasks so it runs again to green", async () => {
    const run = await stand.runner.triggerRun("web_ok", { conf: { napMs: 8000, label: "stopped" }, triggeredBy: "test" });
    await page.goto(`${stand.baseUrl}/ui/dags/web_ok/runs/${encodeURIComponent(run.runId)}`);
    await markDocument(page);
    await page.locator("#run-state .badge.state-running").waitFor({ timeout: 10_000 });
    await page.locator("#mark-failed").click();
    await page.locator(".run-action-result", { hasText: "run marked failed" }).waitFor({ timeout: 5000 });
    await page.locator("#run-state .badge.state-failed").waitFor({ timeout: 10_000 });
    await page.locator('#tasks tr[data-task="extract"] .badge.state-failed').waitFor({ timeout: 5000 });
    await stand.screenshot(page, "run-marked-failed");
    assert.equal((await stand.runner.getRun("web_ok", run.runId)).state, "failed");

    await page.locator("#clear-failed").click();
    await page.locator(".run-action-result", { hasText: "cleared extract, load" }).waitFor({ timeout: 5000 });
    await page.locator("#run-state .badge.state-success").waitFor({ timeout: 30_000 });
    assert.ok(await documentWasKept(page), "the page was reloaded");
    const tis = await stand.runner.listTaskInstances("web_ok", run.runId);
    assert.equal(tis.find((t) => t.taskId === "extract")?.tryNumber, 2, "the cleared task ran as try 2");
    await stand.screenshot(page, "run-cleared-green");
  });

  void it("an open run page follows its run to the end: state, task rows and log", async () => {
    const run = await stand.runner.triggerRun("web_ok", { conf: { napMs: 2000, label: "followed" }, triggeredBy: "test" });
    await page.goto(`${stand.baseUrl}/ui/dags/web_ok/runs/${encodeURIComponent(run.runId)}?task=extract`);
    await markDocument(page);
    assert.match((await page.locator("#run-state .badge").textContent()) ?? "", /queued|running/);
    await page.locator("#run-state .badge.state-success").waitFor({ timeout: 20_000 });
    await page.locator('#tasks tr[data-task="load"] .badge.state-success').waitFor({ timeout: 5000 });
    await page.locator("#log-lines", { hasText: "label=followed" }).waitFor({ timeout: 5000 });
    assert.equal(await page.locator("#tasks svg rect").count(), 2);
    assert.ok(await documentWasKept(page), "the page was reloaded");
    await stand.screenshot(page, "run-followed");
  });

  void it("the conf editor checks conf against the DAG's params in the page, beside the field, before sending", async () => {
    await page.goto(`${stand.baseUrl}/ui/`);
    const row = page.locator('tr[data-dag-row="web_ok"]');
    await row.locator("details.trigger summary").click();
    const textarea = row.locator("textarea");
    const error = row.locator(".conf-error");
    const sentBefore = actionRequests.length;
    const cases: [string, RegExp][] = [
      ['{"days": "two"}', /^conf\.days: expected integer, got string$/],
      ['{"days": -1}', /^conf\.days: must be at least 0$/],
      ['{"extra": 1}', /^conf\.extra: is not a param of this DAG$/],
      ['{"days": 1', /^conf: not valid JSON/],
      ["[1, 2]", /^conf: must be a JSON object, got array$/],
    ];
    for (const [text, expected] of cases) {
      await textarea.fill(text);
      assert.match((await error.textContent()) ?? "", expected, text);
      assert.equal(await textarea.getAttribute("aria-invalid"), "true");
      await row.locator('button[type="submit"]').click();
    }
    await stand.screenshot(page, "conf-error-in-page");
    assert.equal(actionRequests.length, sentBefore, "an invalid conf was sent");
    await textarea.fill('{"days": 1}');
    assert.equal(await error.textContent(), "");
    assert.equal(await textarea.getAttribute("aria-invalid"), null);
  });

  void it("the server checks conf again, and its error is shown beside the field", async () => {
    // a page whose editor knows no schema, so only the server can refuse
    await page.route("**/ui/", async (route) => {
      const response = await route.fetch();
      const body = (await response.text()).replace(/data-params-schema="[^"]*"/g, 'data-params-schema="{}"');
      await route.fulfill({ response, body });
    });
    try {
      await page.goto(`${stand.baseUrl}/ui/`);
      const runsBefore = (await stand.runner.listRuns("web_ok", { limit: 1, offset: 0 })).totalEntries;
      const row = page.locator('tr[data-dag-row="web_ok"]');
      await row.locator("details.trigger summary").click();
      await row.locator("textarea").fill('{"days": "two"}');
      assert.equal(await row.locator(".conf-error").textContent(), "");
      await row.locator('button[type="submit"]').click();
      const error = row.locator(".conf-error", { hasText: "days" });
      await error.waitFor({ timeout: 5000 });
      assert.match((await error.textContent()) ?? "", /conf for DAG 'web_ok' is invalid at 'days'/);
      assert.equal((await stand.runner.listRuns("web_ok", { limit: 1, offset: 0 })).totalEntries, runsBefore);
      await stand.screenshot(page, "conf-error-from-server");
      // the browser logs the refused request itself; that one is expected
      const refused = stand.pageProblems.findIndex((p) => p.includes("status of 400 (Bad Request)"));
      assert.ok(refused >= 0, `the 400 was not seen: ${JSON.stringify(stand.pageProblems)}`);
      stand.pageProblems.splice(refused, 1);
    } finally {
      await page.unroute("**/ui/");
    }
  });

  void it("the pause switch pauses and unpauses the DAG, as the API reports", async () => {
    await page.goto(`${stand.baseUrl}/ui/`);
    const row = page.locator('tr[data-dag-row="web_flaky"]');
    const toggle = row.locator(".pause-switch");
    assert.equal(await toggle.isChecked(), true);
    await toggle.click();
    await row.locator(".switch-label", { hasText: "paused" }).waitFor({ timeout: 5000 });
    assert.equal(await dagIsPaused(stand, "web_flaky"), true);
    await page.reload();
    assert.equal(await row.locator(".pause-switch").isChecked(), false, "the switch shows the stored state after a reload");
    await stand.screenshot(page, "dag-list-paused");
    await row.locator(".pause-switch").click();
    await row.locator(".switch-label", { hasText: "active" }).waitFor({ timeout: 5000 });
    assert.equal(await dagIsPaused(stand, "web_flaky"), false);
  });

  void it("actions refuse requests that do not come from this runner's own pages", async () => {
    const path = "/ui/actions/dags/web_flaky/pause";
    const host = new URL(stand.baseUrl).host;
    const json = { "Content-Type": "application/json", Host: host };
    const body = '{"is_paused": true}';
    const refusals: [string, Record<string, string>, number, string][] = [
      ["no Origin", json, 403, "Origin"],
      ["another Origin", { ...json, Origin: "http://evil.example" }, 403, "Origin"],
      ["a rebound host name", { ...json, Host: `evil.example:${new URL(stand.baseUrl).port}`, Origin: `http://evil.example:${new URL(stand.baseUrl).port}` }, 403, "Host"],
      ["a cross-site fetch", { ...json, Origin: stand.baseUrl, "Sec-Fetch-Site": "cross-site" }, 403, "Sec-Fetch-Site"],
      ["a form body", { Host: host, Origin: stand.baseUrl, "Content-Type": "text/plain" }, 415, "body"],
    ];
    for (const [what, headers, status, field] of refusals) {
      const answer = await rawPost(stand.baseUrl, path, headers, body);
      assert.equal(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.field, field, what);
    }
    assert.equal(await dagIsPaused(stand, "web_flaky"), false);

    // a document of another origin (localhost, not 127.0.0.1) without the web view's CSP, as an
    // attacker's page would be (a page the test fakes with page.route gets no loopback access in
    // Chromium at all): neither a simple (no-cors) POST nor a JSON one changes anything
    const otherOrigin = stand.baseUrl.replace("127.0.0.1", "localhost");
    const attacker = await stand.browser.newPage(); // not stand.newPage(): its CORS errors are expected
    await attacker.goto(`${otherOrigin}/api/v2/monitor/health`);
    const outcomes = await attacker.evaluate(async (target) => {
      const simple = await fetch(target, { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: '{"is_paused":true}' })
        .then((r) => `answered ${r.type}`)
        .catch((err: Error) => `failed ${err.message}`);
      const withJson = await fetch(target, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"is_paused":true}' })
        .then((r) => `answered ${r.status}`)
        .catch((err: Error) => `failed ${err.message}`);
      return { simple, withJson };
    }, `${stand.baseUrl}${path}`);
    await attacker.close();
    assert.equal(outcomes.simple, "answered opaque", "the simple request reached the server");
    assert.match(outcomes.withJson, /^failed/, "a cross-origin JSON POST needs a CORS preflight, which is never granted");
    assert.equal(await dagIsPaused(stand, "web_flaky"), false, `cross-origin requests paused the DAG: ${JSON.stringify(outcomes)}`);

    const allowed = await rawPost(stand.baseUrl, path, { ...json, Origin: stand.baseUrl, "Sec-Fetch-Site": "same-origin" }, '{"is_paused": false}');
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  });

  void it("no page logged an error or a CSP violation", () => {
    assert.deepEqual(stand.pageProblems, []);
  });
});
