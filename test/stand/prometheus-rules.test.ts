// The stand's Prometheus config and alerting rules (src/addons/prometheus.ts), checked by Prometheus's
// own promtool with no stand: the rendered config and rules are valid, and each alert fires on the
// series of its state and stays quiet on series that look alike but are fine (promtool test rules).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { loadStandConfig } from "../../src/config/stand.ts";
import { alertRules, renderPrometheusConfig, renderRules, scrapeTargets, type AlertRule } from "../../src/addons/prometheus.ts";

const run = promisify(execFile);
const dir = mkdtempSync(path.join(os.tmpdir(), "prometheus-rules-"));
// minutes as the unit of the series below: scraped each minute, "for a while" = 2 minutes
const prometheus = { port: 28196, retention_time: "7d", retention_size: "512MB", scrape_interval_seconds: 60, alert_after_seconds: 120 };
const rules = new Map(alertRules(prometheus).map((r) => [r.alert, r]));

async function promtool(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run("promtool", args, { cwd: dir });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool ${args.join(" ")}: ${e.message}\n${e.stdout ?? ""}${e.stderr ?? ""}`, { cause: err });
  }
}

/** An alert as promtool expects it: its labels (the series' and its name's) and its summary with them filled in. */
function expected(alert: string, labels: Record<string, string>): { exp_labels: Record<string, string>; exp_annotations: { summary: string } } {
  const rule = rules.get(alert) as AlertRule;
  const summary = rule.summary.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => labels[name] ?? "");
  return { exp_labels: labels, exp_annotations: { summary } };
}

interface Case {
  name: string;
  series: Record<string, string>;
  /** minute → the alerts expected then (alert name → the labels of each firing one). */
  at: Record<number, Record<string, Record<string, string>[]>>;
}

const CASES: Case[] = [
  {
    name: "a target that stops answering is down after the while, not before",
    series: { 'up{job="loader",instance="l:1"}': "1 0 0 0 0 0", 'up{job="runner",instance="r:1"}': "1 1 1 1 1 1" },
    at: { 2: { StandTargetDown: [] }, 4: { StandTargetDown: [{ job: "loader", instance: "l:1" }] } },
  },
  {
    name: "the loader's sink down fires at once; a sink that answers does not",
    series: { 'loader_sink_down{job="loader",instance="l:1"}': "0 0 1 1" },
    at: { 1: { LoaderSinkDown: [] }, 2: { LoaderSinkDown: [{ job: "loader", instance: "l:1" }] } },
  },
  {
    name: "rows held while nothing is placed fire; rows held while rows are placed (a busy loader) do not",
    series: {
      'loader_held_rows{job="loader",instance="l:1"}': "5 5 5 5 5 5",
      'loader_rows_placed_total{job="loader",instance="l:1"}': "100 100 100 100 100 100",
      'loader_held_rows{job="loader",instance="l:2"}': "5 5 5 5 5 5",
      'loader_rows_placed_total{job="loader",instance="l:2"}': "100 200 300 400 500 600",
    },
    at: { 4: { LoaderRowsHeld: [{ job: "loader", instance: "l:1" }] } },
  },
  {
    name: "a crash-looping service fires, named",
    series: { 'stand_service_crash_looping{job="keeper",instance="k:1",service="clickhouse-ch2"}': "0 1 1", 'stand_service_crash_looping{job="keeper",instance="k:1",service="kafka"}': "0 0 0" },
    at: { 0: { StandServiceCrashLooping: [] }, 2: { StandServiceCrashLooping: [{ job: "keeper", instance: "k:1", service: "clickhouse-ch2" }] } },
  },
  {
    name: "lag that grows for the while fires per topic; a steady lag does not",
    series: {
      'loader_consumer_lag{job="loader",instance="l:1",topic="hits",partition="0"}': "0 10 20 30 40 50 60 70",
      'loader_consumer_lag{job="loader",instance="l:1",topic="orders",partition="0"}': "50 50 50 50 50 50 50 50",
    },
    at: { 2: { ConsumerLagGrowing: [] }, 6: { ConsumerLagGrowing: [{ topic: "hits" }] } },
  },
  {
    name: "a world DAG's newest run red fires; another DAG's does not, nor a world DAG's green one",
    series: {
      'runner_dag_latest_run_failed{job="runner",instance="r:1",dag_id="world_next_day"}': "0 1",
      'runner_dag_latest_run_failed{job="runner",instance="r:1",dag_id="example_hello"}': "1 1",
      'runner_dag_latest_run_failed{job="runner",instance="r:1",dag_id="world_recreate"}': "0 0",
    },
    at: { 1: { WorldRunFailed: [{ job: "runner", instance: "r:1", dag_id: "world_next_day" }] } },
  },
];

describe("the stand's Prometheus config and alerting rules, through promtool", () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("the config of the stand (every target) and the rules pass promtool check", async () => {
    const config = loadStandConfig();
    const paths = { dir, data: path.join(dir, "data"), config: path.join(dir, "prometheus.yml"), rules: path.join(dir, "rules.yml"), log: path.join(dir, "log") };
    writeFileSync(paths.rules, renderRules(prometheus));
    writeFileSync(paths.config, renderPrometheusConfig(config, prometheus, paths));
    assert.match(await promtool(["check", "rules", paths.rules]), new RegExp(`SUCCESS: ${rules.size} rules found`));
    assert.match(await promtool(["check", "config", paths.config]), /SUCCESS/);
    const jobs = scrapeTargets(config, prometheus).map((t) => t.job);
    assert.deepEqual(jobs.slice(0, 3), ["prometheus", "runner", "loader"]);
    assert.doesNotMatch(readFileSync(paths.config, "utf8"), /authorization:/, "a loopback runner's /metrics needs no token");
  });

  it("a pool of 2 runners and 3 loaders: one job each, every instance a target, and promtool takes it", async () => {
    const base = loadStandConfig();
    const config = { ...base, runner: { ...base.runner, instances: 2 }, loader: { ...base.loader, instances: 3 } };
    const paths = { dir, data: path.join(dir, "data"), config: path.join(dir, "prometheus-pool.yml"), rules: path.join(dir, "rules.yml"), log: path.join(dir, "log") };
    writeFileSync(paths.rules, renderRules(prometheus));
    writeFileSync(paths.config, renderPrometheusConfig(config, prometheus, paths));
    assert.match(await promtool(["check", "config", paths.config]), /SUCCESS/);
    const at = (port: number): string => `${base.bind_host}:${port}`;
    const targets = new Map(scrapeTargets(config, prometheus).map((t) => [t.job, t.targets]));
    assert.deepEqual(targets.get("runner"), [at(base.runner.api_port), at(base.runner.api_port + 1)]);
    assert.deepEqual(targets.get("loader"), [0, 1, 2].map((k) => at(base.loader.port + k)));
  });

  it("a runner listening beyond loopback is scraped with its token, and promtool takes that config", async () => {
    const base = loadStandConfig();
    const config = { ...base, runner: { ...base.runner, listen_host: "0.0.0.0", api_token: "a-token-of-twenty-four-chars-at-least" } };
    const paths = { dir, data: path.join(dir, "data"), config: path.join(dir, "prometheus-open.yml"), rules: path.join(dir, "rules.yml"), log: path.join(dir, "log") };
    writeFileSync(paths.rules, renderRules(prometheus));
    writeFileSync(paths.config, renderPrometheusConfig(config, prometheus, paths));
    assert.match(await promtool(["check", "config", paths.config]), /SUCCESS/);
    assert.match(readFileSync(paths.config, "utf8"), /job_name: runner\n {4}authorization:\n {6}credentials: "a-token-of-twenty-four-chars-at-least"/);
  });

  it("each alert fires on its state and not on its look-alikes (promtool test rules)", async () => {
    writeFileSync(path.join(dir, "rules.yml"), renderRules(prometheus));
    const tests = CASES.map((c) => ({
      name: c.name,
      interval: "1m",
      input_series: Object.entries(c.series).map(([series, values]) => ({ series, values })),
      alert_rule_test: Object.entries(c.at).flatMap(([minute, alerts]) =>
        Object.entries(alerts).map(([alertname, firing]) => ({ eval_time: `${minute}m`, alertname, exp_alerts: firing.map((labels) => expected(alertname, labels)) })),
      ),
    }));
    writeFileSync(path.join(dir, "rules.test.yml"), stringify({ rule_files: ["rules.yml"], evaluation_interval: "1m", tests }));
    assert.match(await promtool(["test", "rules", "rules.test.yml"]), /SUCCESS/);
    const tested = new Set(CASES.flatMap((c) => Object.values(c.at).flatMap((a) => Object.keys(a))));
    assert.deepEqual([...rules.keys()].filter((name) => !tested.has(name)), [], "every rule has a case");
  });
});
