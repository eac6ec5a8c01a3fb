// `make bi` on the test stand, as a user types it: the pinned .venv-bi installed (scripts/bi-venv.sh),
// Superset started at bi.port with its metadata initialised, and the starter dashboard put in place.
// Then what a mentee sees: Chromium logs in through Superset's login form and the dashboard draws
// each of its charts; each chart's data (Superset's chart data API, running the chart's own query on
// ClickHouse 18.16 as `reader`) equals the marts read directly. A second `make bi` changes nothing;
// a wrong password is refused; `make bi-down` stops it and the keeper leaves it stopped.
// Superset's virtualenv is a heavy outside tool (about 3 minutes to install), so Superset itself runs
// in make test-full (TEST_TIER=full); make test checks the starter charts against the marts on
// ClickHouse 18.16 as `reader`: each chart's view, columns and sums are there and answer.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { z } from "zod";
import { launchArgs, repoRoot } from "../../src/config/stand.ts";
import { childExitCode, childOutput } from "../../src/errors.ts";
import { serves } from "../../src/services/service.ts";
import { optionalServices, standContext } from "../../src/stand/stand.ts";
import { STARTER_CHARTS, STARTER_DASHBOARD_SLUG, SupersetApi, starterDashboardUrl } from "../../src/addons/superset-dashboard.ts";
import { SUPERSET_SERVICE } from "../../src/addons/superset.ts";
import { withClickHouse } from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";
import { launchChromium, SCREENSHOT_DIR } from "../../testkit/runner/web-app.ts";
import { connectClickHouse } from "../../src/clickhouse/client.ts";
import { testTier } from "../../testkit/matrix.ts";

const run = promisify(execFile);
const ctx = standContext(() => undefined);
const bi = ctx.config.bi;
const base = bi ? `http://${ctx.config.bind_host}:${bi.port}` : "";

/** A command of the stand as a user types it (STAND_CONFIG is the test stand's, inherited). */
async function command(file: string, args: string[], timeoutMs: number): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd: repoRoot, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const { stdout, stderr } = childOutput(err);
    const code = childExitCode(err);
    return { code, out: stdout + stderr };
  }
}

const makeBi = (): Promise<{ code: number; out: string }> => command(process.execPath, launchArgs("src/stand/cli.ts", "bi"), 600_000);

const chartList = z.object({ result: z.array(z.object({ id: z.number(), slice_name: z.string() }).passthrough()) });
const chartData = z.object({ result: z.array(z.object({ status: z.string(), data: z.array(z.record(z.string(), z.unknown())) }).passthrough()) });

/** The columns a chart's form and query name: its metrics' columns, its axis, its grouping. */
function chartColumns(chart: (typeof STARTER_CHARTS)[number]): string[] {
  const metricColumns = chart.query.metrics.map((m) => String((m.column as { column_name?: unknown } | undefined)?.column_name));
  const groupBy = chart.query.columns.map((c) => (typeof c === "string" ? c : String((c as { sqlExpression?: unknown }).sqlExpression)));
  return [...new Set([...groupBy, ...metricColumns])];
}

if (testTier() === "gate") {
  describe("the starter dashboard's charts on the marts (make test; Superset itself runs in make test-full)", () => {
    useWorldSuite({ wholeWorld: true });

    it("each chart's view and columns exist in dm, and its query answers as reader on ClickHouse 18.16", async () => {
      assert.equal(STARTER_CHARTS.length, 3);
      const reader = connectClickHouse({ account: "reader" });
      try {
        for (const chart of STARTER_CHARTS) {
          const columns = chartColumns(chart);
          const known = (await reader.query<{ name: string }>(`SELECT name FROM system.columns WHERE database = 'dm' AND table = '${chart.table}'`)).map((r) => r.name);
          for (const column of columns) assert.ok(known.includes(column), `${chart.name}: dm.${chart.table} has ${column} (it has ${known.join(", ")})`);
          const sums = chart.query.metrics.map((m) => `sum(${String((m.column as { column_name?: unknown }).column_name)})`);
          const group = columns.filter((c) => !sums.some((s) => s.includes(`(${c})`)));
          const rows = await reader.query<Record<string, unknown>>(`SELECT ${[...group, ...sums].join(", ")} FROM dm.${chart.table} GROUP BY ${group.join(", ")}`);
          assert.ok(rows.length >= 1, `${chart.name}: its query answers rows`);
        }
      } finally {
        await reader.close();
      }
    });
  });
}

// make test-full runs Superset (the head of this file says why)
if (testTier() === "full") describe("Superset on the marts (make bi, test stand)", { skip: bi ? false : "the test stand config has no bi section" }, () => {
  useWorldSuite({ wholeWorld: true });
  let firstRun = "";

  before(async () => {
    const venv = await command("bash", ["scripts/bi-venv.sh"], 1_200_000);
    assert.equal(venv.code, 0, `scripts/bi-venv.sh failed:\n${venv.out}`);
    const up = await makeBi();
    assert.equal(up.code, 0, `stand cli bi failed:\n${up.out}`);
    firstRun = up.out;
  });

  after(async () => {
    await command(process.execPath, launchArgs("src/stand/cli.ts", "bi-down"), 120_000);
  });

  it("make bi starts Superset at its port and names the starter dashboard with its address", () => {
    assert.match(firstRun, /superset: (made|kept) the starter dashboard \(3 charts\)/, firstRun);
    assert.ok(firstRun.includes(starterDashboardUrl(ctx.config, bi!)), firstRun);
  });

  it("each chart's data, run by Superset on ClickHouse 18.16 as reader, equals the marts read directly", async () => {
    const api = await SupersetApi.login(base, bi!.admin.username, bi!.admin.password);
    const charts = (await api.call("GET", "/api/v1/chart/?q=(page_size:100)", chartList)).result;
    const dataOf = async (name: string): Promise<Record<string, unknown>[]> => {
      const chart = charts.find((c) => c.slice_name === name);
      assert.ok(chart, `chart ${name} exists`);
      const answer = await api.call("GET", `/api/v1/chart/${chart.id}/data/?format=json&force=true`, chartData);
      assert.equal(answer.result[0]?.status, "success", name);
      return answer.result[0]?.data ?? [];
    };
    const day = (ms: unknown): string => new Date(Number(ms)).toISOString().slice(0, 10);

    const revenue = await dataOf("Revenue per day");
    const expectedRevenue = await withClickHouse((ch) => ch.query<{ d: string; r: string }>("SELECT toString(report_date) AS d, toString(sum(revenue)) AS r FROM dm.daily_revenue_v GROUP BY report_date ORDER BY d"));
    assert.ok(expectedRevenue.length >= 5, "the world has days of revenue");
    assert.deepEqual(
      revenue.map((row) => [day(row.report_date), Number(row["SUM(revenue)"])]).sort(),
      expectedRevenue.map((row) => [row.d, Number(row.r)]).sort(),
    );

    const byCategory = await dataOf("Revenue by category");
    const expectedCategories = await withClickHouse((ch) => ch.query<{ c: string; r: string }>("SELECT category AS c, toString(sum(revenue)) AS r FROM dm.daily_revenue_v GROUP BY category"));
    assert.deepEqual(
      byCategory.map((row) => [String(row.category), Number(row["SUM(revenue)"])]).sort(),
      expectedCategories.map((row) => [row.c, Number(row.r)]).sort(),
    );

    const traffic = await dataOf("Visitors and sessions per day");
    const expectedTraffic = await withClickHouse((ch) => ch.query<{ d: string; v: string; s: string }>("SELECT toString(report_date) AS d, toString(sum(visitors)) AS v, toString(sum(sessions)) AS s FROM dm.daily_traffic_v GROUP BY report_date"));
    assert.deepEqual(
      traffic.map((row) => [day(row.report_date), Number(row["SUM(visitors)"]), Number(row["SUM(sessions)"])]).sort(),
      expectedTraffic.map((row) => [row.d, Number(row.v), Number(row.s)]).sort(),
    );
  });

  it("Chromium logs in through Superset's form and the starter dashboard draws every chart", async () => {
    const chrome = await launchChromium();
    try {
      const page = await chrome.browser.newPage();
      await page.goto(`${base}/login/`);
      await page.locator('input[name="username"], #username').first().fill(bi!.admin.username);
      await page.locator('input[name="password"], #password').first().fill(bi!.admin.password);
      await Promise.all([page.waitForURL((url) => !url.pathname.startsWith("/login"), { timeout: 60_000 }), page.keyboard.press("Enter")]);
      await page.goto(`${base}/superset/dashboard/${STARTER_DASHBOARD_SLUG}/`);
      // each chart is drawn by ECharts into a canvas once its query answered
      const canvases = page.locator(".dashboard-component-chart-holder canvas");
      await page.waitForFunction((n) => document.querySelectorAll(".dashboard-component-chart-holder canvas").length >= n, STARTER_CHARTS.length, { timeout: 120_000 });
      assert.ok((await canvases.count()) >= STARTER_CHARTS.length);
      for (const chart of STARTER_CHARTS) assert.ok(await page.getByText(chart.name, { exact: true }).first().isVisible(), `${chart.name} is on the dashboard`);
      assert.equal(await page.locator(".dashboard-component-chart-holder .ant-alert-error, .dashboard-component-chart-holder [role=alert]").count(), 0, "no chart shows an error");
      await page.waitForTimeout(2000); // the screenshot after ECharts' drawing animation, for a person to look at
      await mkdir(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, "superset-starter-dashboard.png"), fullPage: true });
    } finally {
      await chrome.close();
    }
  });

  it("a wrong password is refused at Superset's login", async () => {
    await assert.rejects(SupersetApi.login(base, bi!.admin.username, "not-the-password"), /login as admin .* failed: HTTP 401/);
  });

  it("a second make bi keeps what is there: no new dashboard, chart or dataset", async () => {
    const again = await makeBi();
    assert.equal(again.code, 0, again.out);
    assert.match(again.out, /superset: already running/);
    assert.match(again.out, /superset: kept the starter dashboard \(3 charts\)/);
    const api = await SupersetApi.login(base, bi!.admin.username, bi!.admin.password);
    const names = (await api.call("GET", "/api/v1/chart/?q=(page_size:100)", chartList)).result.map((c) => c.slice_name).sort();
    assert.deepEqual(names, STARTER_CHARTS.map((c) => c.name).sort());
  });

  it("make bi-down stops it, and it stays stopped", async () => {
    const down = await command(process.execPath, launchArgs("src/stand/cli.ts", "bi-down"), 120_000);
    assert.equal(down.code, 0, down.out);
    assert.match(down.out, /superset: stopped/);
    const [service] = optionalServices(ctx);
    assert.ok(service);
    assert.equal(await serves(ctx, service), false);
    assert.equal(ctx.supervisor.readWant(SUPERSET_SERVICE)?.want, "down", "wanted down: the keeper leaves it");
  });
});
