// Prometheus as a stand service on the test stand (scraped every second there): it serves, scrapes
// the runner, the loader and itself, holds the stand's rules, and `stand status` (make
// check-services) shows its targets and the alerts that fire. A world run that goes red (a restore of
// a snapshot that does not exist: refused before it touches the world) fires WorldRunFailed, and the
// World page's history part reads the loader's series from it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { alertRules, prometheusUrl } from "../../src/addons/prometheus.ts";
import { standContext, standStatus } from "../../src/stand/stand.ts";
import { readMetricsHistory } from "../../src/web/metrics-history.ts";
import { describeRun, runDag } from "../../testkit/world/rest-world.ts";
import { useWorldSuite } from "../../testkit/stand/world-suite.ts";

const ctx = standContext(() => undefined);
const prometheus = ctx.config.prometheus;
const base = prometheus ? prometheusUrl(ctx.config, prometheus) : "";

const vector = z.object({ data: z.object({ result: z.array(z.object({ metric: z.record(z.string(), z.string()), value: z.tuple([z.number(), z.string()]) })) }) });
const alerts = z.object({ data: z.object({ alerts: z.array(z.object({ labels: z.record(z.string(), z.string()), state: z.string() })) }) });
const rules = z.object({ data: z.object({ groups: z.array(z.object({ rules: z.array(z.object({ name: z.string() })) })) }) });

async function get<T>(pathAndQuery: string, schema: z.ZodType<T>): Promise<T> {
  const response = await fetch(`${base}${pathAndQuery}`);
  assert.equal(response.status, 200, `GET ${pathAndQuery}`);
  return schema.parse(await response.json());
}

/** Polls (every 0.5 s, up to `seconds`) until `check` holds; a scrape is a clock of its own. */
async function eventually(what: string, seconds: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe("Prometheus on the test stand: targets, rules, check-services, an alert, the World page's history", () => {
  useWorldSuite({ wholeWorld: true }); // a world the loader consumes: its lag series exist

  it("scrapes the runner, the loader and itself (up = 1), and holds every rule of the stand", async () => {
    assert.ok(prometheus, "the test stand config has a prometheus section");
    await eventually("runner, loader and prometheus up", 30, async () => {
      const up = await get("/api/v1/query?query=up", vector);
      const byJob = new Map(up.data.result.map((r) => [r.metric.job, r.value[1]]));
      return ["runner", "loader", "prometheus"].every((job) => byJob.get(job) === "1");
    });
    const loaded = (await get("/api/v1/rules", rules)).data.groups.flatMap((g) => g.rules.map((r) => r.name));
    assert.deepEqual(loaded.sort(), alertRules(prometheus).map((r) => r.alert).sort());
  });

  it("make check-services shows prometheus healthy with its targets", async () => {
    const { services } = await standStatus(ctx);
    const row = services.find((s) => s.name === "prometheus");
    assert.ok(row?.healthy, JSON.stringify(row));
    assert.match(row.detail, /targets up \d+ of \d+/);
  });

  it("a world run that goes red fires WorldRunFailed for its DAG", async () => {
    const refused = await runDag("world_restore", { name: "no-such-snapshot-for-prometheus" }, 120);
    assert.equal(refused.run.state, "failed", describeRun(refused));
    await eventually("WorldRunFailed firing for world_restore", 30, async () => {
      const firing = (await get("/api/v1/alerts", alerts)).data.alerts.filter((a) => a.state === "firing");
      return firing.some((a) => a.labels.alertname === "WorldRunFailed" && a.labels.dag_id === "world_restore");
    });
    const { services } = await standStatus(ctx);
    assert.match(services.find((s) => s.name === "prometheus")?.detail ?? "", /firing: .*WorldRunFailed/);
  });

  it("the World page's history reads the loader's lag and rows placed from it, per minute", async () => {
    const history = await readMetricsHistory(ctx.config);
    assert.equal(history.minutes.length, 60);
    assert.equal(history.prometheusUrl, base);
    assert.ok(history.lag.some((v) => v !== null), "the last minute has a lag sample (the loader is scraped every second)");
  });
});
