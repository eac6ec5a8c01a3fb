// User data stays text: XSS probes in conf, in a task's log line, in a variable's value and
// description, and in a DAG's description are shown literally, on pages the server rendered and on
// pages the script re-rendered from JSON; the CSP stops inline script even if markup got through;
// and the schema page renders an answer it does not know the shape of, escaped.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { before, describe, it } from "node:test";
import express from "express";
import type { Page } from "playwright-core";
import { pino } from "pino";
import { escapeHtml, html } from "../../src/web/html.ts";
import { createWebRouter } from "../../src/web/router.ts";
import { CONTENT_SECURITY_POLICY } from "../../src/web/security.ts";
import { call } from "../../testkit/runner/api-app.ts";
import { triggerAndWait } from "../../testkit/runner/runner-db.ts";
import { useWebStand } from "../../testkit/runner/web-app.ts";
import { LABEL_VARIABLE } from "../../testkit/runner/web-dags.ts";

const PROBE = `<img src=x onerror=window.__xss=1></script><script>window.__xss=1</script>"'&amp;`;

async function assertNoScriptRan(page: Page, where: string): Promise<void> {
  const ran = await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss);
  assert.equal(ran, undefined, `${where}: injected script ran`);
  assert.equal(await page.locator('img[src="x"]').count(), 0, `${where}: injected markup became an element`);
}

void describe("escaping and CSP", () => {
  const stand = useWebStand();
  let page: Page;

  before(async () => {
    page = await stand.newPage();
  });

  void it("escapeHtml escapes the five HTML characters; html`` escapes every interpolation but its own fragments", () => {
    assert.equal(escapeHtml(`<a href="x" title='y'>&</a>`), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
    const inner = html`<b>${"<i>"}</b>`;
    assert.equal(html`<p title="${'"><script>'}">${inner}${["<", html`<br>`]}${null}${undefined}${false}${0}</p>`.text,
      `<p title="&quot;&gt;&lt;script&gt;"><b>&lt;i&gt;</b>&lt;<br>0</p>`);
  });

  void it("a probe in conf, in a log line and in a variable stays text on server-rendered pages", async () => {
    const run = await triggerAndWait(stand.runner, "web_ok", { label: PROBE });
    assert.equal(run.state, "success");
    await stand.runner.setVariable("probe_var", PROBE, { changedBy: "api:test", description: PROBE });

    await page.goto(`${stand.baseUrl}/ui/dags/web_ok/runs/${encodeURIComponent(run.runId)}?task=extract`);
    assert.deepEqual(JSON.parse((await page.locator("#run-conf").textContent()) ?? ""), { label: PROBE });
    const logText = (await page.locator("#log-lines").textContent()) ?? "";
    assert.ok(logText.includes(`label=${PROBE} days=unset`), logText);
    await assertNoScriptRan(page, "run page");
    await stand.screenshot(page, "xss-run");

    await page.goto(`${stand.baseUrl}/ui/variables`);
    assert.equal(await page.locator(`section[data-variable="${LABEL_VARIABLE}"] p code.value`).textContent(), PROBE);
    assert.equal(await page.locator('section[data-variable="probe_var"] p code.value').textContent(), PROBE);
    assert.equal(await page.locator('section[data-variable="probe_var"] .description').textContent(), PROBE);
    await assertNoScriptRan(page, "variables page");
    await stand.screenshot(page, "xss-variables");

    await page.goto(`${stand.baseUrl}/ui/variables/probe_var`);
    assert.equal(await page.locator("table.changes tbody td:last-child").textContent(), PROBE);
    await assertNoScriptRan(page, "variable page");

    await page.goto(`${stand.baseUrl}/ui/`);
    assert.equal(await page.locator('tr[data-dag-row="web_ok"] .description i').count(), 0);
    assert.equal(await page.locator('tr[data-dag-row="web_ok"] .description').textContent(), "two tasks in a row <i>not italic</i>");
  });

  void it("a probe stays text when the page script re-renders a run from JSON", async () => {
    const run = await stand.runner.triggerRun("web_ok", { conf: { label: PROBE, napMs: 1500 }, triggeredBy: "test" });
    await page.goto(`${stand.baseUrl}/ui/dags/web_ok/runs/${encodeURIComponent(run.runId)}?task=extract`);
    await page.locator("#run-state .badge.state-success").waitFor({ timeout: 20_000 });
    const log = page.locator("#log-lines", { hasText: `label=${PROBE}` });
    await log.waitFor({ timeout: 5000 });
    await assertNoScriptRan(page, "refreshed run page");
  });

  void it("every page carries the CSP, and the browser enforces it on inline script", async () => {
    for (const path of ["/ui/", "/ui/dags/web_ok", "/ui/variables", "/ui/schema", "/ui/data/", "/ui/nope"]) {
      const answer = await call(stand.baseUrl, "GET", path);
      assert.equal(answer.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY, path);
      assert.equal(answer.headers.get("x-content-type-options"), "nosniff", path);
    }
    assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
    await page.goto(`${stand.baseUrl}/ui/`);
    const problemsBefore = stand.pageProblems.length;
    const ran = await page.evaluate(async () => {
      const script = document.createElement("script");
      script.textContent = "window.__inline = 1";
      document.body.append(script);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return (window as unknown as { __inline?: number }).__inline;
    });
    assert.equal(ran, undefined, "inline script ran: the CSP is not enforced");
    const violations = stand.pageProblems.splice(problemsBefore);
    assert.ok(violations.some((p) => p.includes("Content Security Policy")), JSON.stringify(violations));
  });

  /** The web router in an app of the test's making, with a schema source of the test's making or none. */
  async function withSchemaApp(source: (() => Promise<unknown>) | undefined, work: (baseUrl: string) => Promise<void>): Promise<void> {
    const app = express();
    app.use(createWebRouter({ runner: stand.runner, logger: pino({ level: "silent" }), schemaStatus: source }));
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      await work(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    } finally {
      // the page leaves the app before it closes: a page still on it polls a closed port and logs
      // ERR_CONNECTION_REFUSED (seen in a gate run), which the last test would count as a problem
      await page.goto("about:blank");
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  void it("the schema page renders the status it is given, whatever its shape, escaped", async () => {
    const odd = { status: "drift", files: [{ file: `010_${PROBE}.sql`, checksum: "abc", drift: true }, { file: "020_ok.sql", checksum: "def", drift: false }] };
    await withSchemaApp(() => Promise.resolve(odd), async (baseUrl) => {
      await page.goto(`${baseUrl}/ui/schema`);
      assert.equal(await page.locator("#schema-not-available").count(), 0);
      const cells = await page.locator("#schema-status table tbody tr td:first-child").allTextContents();
      assert.deepEqual(cells, [`010_${PROBE}.sql`, "020_ok.sql"]);
      assert.match((await page.locator("#schema-status").textContent()) ?? "", /drift/);
      await assertNoScriptRan(page, "schema page");
      await stand.screenshot(page, "schema-shape");
    });
  });

  void it("a failing schema source is shown as the error it is, escaped", async () => {
    await withSchemaApp(() => Promise.reject(new Error(`ledger unreachable ${PROBE}`)), async (baseUrl) => {
      const response = await page.goto(`${baseUrl}/ui/schema`);
      assert.equal(response?.status(), 200);
      assert.match((await page.locator("#schema-error").textContent()) ?? "", /ledger unreachable/);
      await assertNoScriptRan(page, "schema error page");
    });
  });

  void it("without a schema source the page says plainly it is not available", async () => {
    await withSchemaApp(undefined, async (baseUrl) => {
      const response = await page.goto(`${baseUrl}/ui/schema`);
      assert.equal(response?.status(), 200);
      assert.match((await page.locator("#schema-not-available").textContent()) ?? "", /Not available yet/);
      await stand.screenshot(page, "schema-not-available");
    });
  });

  void it("no page logged an error or a CSP violation", () => {
    assert.deepEqual(stand.pageProblems, []);
  });
});
