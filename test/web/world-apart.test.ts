// The World page without the shared world: its sources pointed at a ClickHouse and a Kafka that do
// not answer (each part says so, the page and its JSON answer 200), bad query values (400 page, 422
// problem JSON), the route in the OpenAPI document, hostile text from the sources shown as text, and
// the link in every page's header. A fresh runner database; nothing of the world is read, so no lock.
import assert from "node:assert/strict";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { pino } from "pino";
import { createApp } from "../../src/api/app.ts";
import { loadStandConfig, type StandConfig } from "../../src/config/stand.ts";
import type { WorldSources } from "../../src/web/pages/world-view.ts";
import { createWebRouter } from "../../src/web/router.ts";
import { worldApiRoutes } from "../../src/web/world-api.ts";
import { readKafkaOffsets } from "../../src/web/kafka-lag.ts";
import { readWorldNumbers, type WorldNumbers } from "../../src/web/world-summary.ts";
import { useTestRunner } from "../../testkit/runner/runner-db.ts";
import { webDags } from "../../testkit/runner/web-dags.ts";

const logger = pino({ level: "silent" });
const XSS = `<img src=x onerror="window.__xss=1">`;

/** The test stand's config with ClickHouse and Kafka on a port where nothing listens. */
function deadStandConfig(): StandConfig {
  const config = loadStandConfig();
  return {
    ...config,
    clickhouse: { ...config.clickhouse, nodes: config.clickhouse.nodes.map((n) => ({ ...n, http_port: 1 })) },
    kafka: { ...config.kafka, port: 1 },
  };
}

const hostileNumbers: WorldNumbers = {
  layers: { ok: true, data: { dates: ["2026-06-01"], series: [{ name: XSS, source: XSS, counts: [3] }] } },
  errors: { ok: false, error: `table missing ${XSS}` },
  classes: { ok: true, data: { dates: [], series: [] } },
  dq: {
    ok: true,
    data: {
      latest: [
        {
          check: XSS,
          status: "fail",
          run_id: "r1",
          days: 1,
          failed_rows: 1,
          failed_days: [{ date: "2026-06-01", reference_rows: 1, actual_rows: 2, failed_rows: 1, offending_keys: [XSS] }],
        },
      ],
      runs: [{ run_id: XSS, started_at: "2026-06-01 00:00:00", checks: { [XSS]: { status: "fail", failed_rows: 1 } } }],
    },
  },
};

void describe("the World page apart from the world", () => {
  const engine = useTestRunner(webDags);
  const servers: Server[] = [];
  const urls: Record<"dead" | "hostile", string> = { dead: "", hostile: "" };

  async function serve(world: WorldSources): Promise<string> {
    const app = createApp({
      runner: engine.runner,
      token: "world-test-token-0123",
      logger,
      routers: [createWebRouter({ runner: engine.runner, logger, world })],
      routes: worldApiRoutes(engine.runner, world),
    });
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  before(async () => {
    const config = deadStandConfig();
    urls.dead = await serve({ numbers: (days) => readWorldNumbers({ days, config }), kafka: () => readKafkaOffsets({ config }) });
    urls.hostile = await serve({
      numbers: () => Promise.resolve(hostileNumbers),
      kafka: () => Promise.reject(new Error(`broker said ${XSS}`)),
      schema: () => Promise.resolve({ status: "drift", drift: true, note: XSS, summary: { changed: 1 } }),
    });
  });
  after(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  void it("a ClickHouse and a Kafka that do not answer are shown as such; page and JSON answer 200", async () => {
    const started = Date.now();
    const page = await fetch(`${urls.dead}/ui/world`);
    assert.equal(page.status, 200);
    const text = await page.text();
    for (const part of ["ClickHouse layers", "ClickHouse errors", "ClickHouse dq", "ClickHouse classes", "Kafka"]) {
      assert.match(text, new RegExp(`data-part-error="${part}">${part}: not available — `), part);
    }
    assert.match(text, /ECONNREFUSED|connect|did not answer/i);
    assert.ok(Date.now() - started < 8000, "the page does not hang on a dead service");
    const json = await fetch(`${urls.dead}/api/v2/world/summary`);
    assert.equal(json.status, 200);
    const body = (await json.json()) as Record<string, { ok: boolean; error?: string }>;
    for (const part of ["layers", "errors", "classes", "dq", "kafka"]) assert.equal(body[part]?.ok, false, part);
    assert.equal(body.position?.ok, true, "the position comes from the runner");
  });

  void it("bad query values: a 400 page naming days, 422 problem JSON from the API", async () => {
    const page = await fetch(`${urls.dead}/ui/world?days=0`);
    assert.equal(page.status, 400);
    assert.match(await page.text(), /days/);
    const api = await fetch(`${urls.dead}/api/v2/world/summary?days=abc`);
    assert.equal(api.status, 422);
    assert.match(api.headers.get("content-type") ?? "", /problem\+json/);
    const problem = (await api.json()) as { field?: string };
    assert.equal(problem.field, "days");
    const unknown = await fetch(`${urls.dead}/api/v2/world/summary?bogus=1`);
    assert.equal(unknown.status, 422);
    assert.match(JSON.stringify(await unknown.json()), /unknown query parameter 'bogus'/);
  });

  void it("the OpenAPI document declares GET /api/v2/world/summary with its response schema", async () => {
    const doc = (await (await fetch(`${urls.dead}/api/v2/openapi.json`)).json()) as {
      paths: Record<string, { get?: { operationId: string; parameters?: { name: string }[] } }>;
      components: { schemas: Record<string, unknown> };
    };
    const get = doc.paths["/api/v2/world/summary"]?.get;
    assert.equal(get?.operationId, "get_world_summary");
    assert.deepEqual(get.parameters?.map((p) => p.name), ["days"]);
    assert.ok(doc.components.schemas.WorldSummaryResponse);
  });

  void it("text from the sources is escaped everywhere; the header links the World page on every page", async () => {
    const text = await (await fetch(`${urls.hostile}/ui/world`)).text();
    assert.ok(!text.includes(XSS), "no raw markup from the sources");
    assert.ok(text.includes("&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;"));
    assert.match(text, /data-part-error="Kafka">Kafka: not available — broker said &lt;img/);
    assert.match(text, /id="dq-headline" class="error-text">red: &lt;img/);
    for (const path of ["/ui/", "/ui/variables", "/ui/schema", "/ui/world"]) {
      const html = await (await fetch(`${urls.hostile}${path}`)).text();
      assert.match(html, /<a href="\/ui\/world"( aria-current="page")?>World<\/a>/, path);
    }
  });
});
