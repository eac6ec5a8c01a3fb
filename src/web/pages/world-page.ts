// The World page (/ui/world): the world for looking instead of querying. Position and its history,
// rows per day in each layer, refused hits per reason, the data-quality checks (the latest result
// of each, why a red one is red, and a strip over dq_check runs), purchase_vs_orders classes per
// day, Kafka offsets and lag, and the schema status. Charts are server-side SVG (svg-chart.ts);
// every number is also in a table under its chart. A part that could not be read says why.
import type { DailySeries, DqCheckResult, DqResults } from "../world-summary.ts";
import type { PartitionOffsets } from "../kafka-lag.ts";
import type { MetricsHistoryView } from "../metrics-history.ts";
import { html, webPaths, type SafeHtml } from "../html.ts";
import { formatTime, renderPage } from "../layout.ts";
import { chartLegend, stackedBarChart } from "../svg-chart.ts";
import { WORLD_DAYS_DEFAULT, type Part, type PositionChangeView, type ServiceView, type SnapshotsView, type WorldSchemaView, type WorldView } from "./world-view.ts";

export const WORLD_API_PATH = "/api/v2/world/summary";
const DQ_DAG = "dq_check";
const POSITION_BARS = 60;

function partOr<T>(name: string, value: Part<T>, render: (data: T) => SafeHtml): SafeHtml {
  if (value.ok) return render(value.data);
  return html`<p class="notice error-text" data-part-error="${name}">${name}: not available — ${value.error}</p>`;
}

function numbersTable(id: string, data: DailySeries): SafeHtml {
  return html`<details class="numbers"><summary>numbers</summary>
<table class="num-table" data-numbers="${id}"><thead><tr><th>day</th>${data.series.map((s) => html`<th>${s.name}</th>`)}</tr></thead><tbody>
${data.dates.map(
  (date, i) =>
    html`<tr data-date="${date}"><td>${date}</td>${data.series.map((s) => html`<td class="num" data-series="${s.name}">${s.counts[i] ?? 0}</td>`)}</tr>`,
)}</tbody></table></details>`;
}

function seriesChart(id: string, data: DailySeries, legend: boolean): SafeHtml {
  if (data.dates.length === 0) return html`<p class="muted" data-empty="${id}">no rows yet</p>`;
  return html`${legend ? chartLegend(data.series) : ""}${stackedBarChart({ id, labels: data.dates, series: data.series })}${numbersTable(id, data)}`;
}

function renderLayers(data: DailySeries): SafeHtml {
  if (data.dates.length === 0) return html`<p class="muted" data-empty="layers">no rows yet</p>`;
  const charts = data.series.map(
    (s) => html`<figure class="layer" data-layer="${s.name}"><figcaption><strong>${s.name}</strong> <span class="muted">${s.source}</span></figcaption>
${stackedBarChart({ id: `layer-${s.name}`, labels: data.dates, series: [s], height: 90, seriesClass: () => "c5" })}</figure>`,
  );
  return html`<div class="small-multiples">${charts}</div>${numbersTable("layers", data)}`;
}

function positionHistory(history: readonly PositionChangeView[]): SafeHtml {
  // the newest POSITION_BARS numeric values: a stand whose tests set the variable by hand has hundreds
  const numeric = history.filter((c) => c.newValue !== null && /^-?\d+$/.test(c.newValue)).slice(-POSITION_BARS);
  const chart =
    numeric.length === 0
      ? html``
      : stackedBarChart({
          id: "position",
          labels: numeric.map((c) => formatTime(c.changedAt)),
          series: [{ name: "position", counts: numeric.map((c) => Number(c.newValue)) }],
          height: 80,
          seriesClass: () => "c5",
        });
  const newestFirst = [...history].reverse().slice(0, 20);
  return html`${chart}
<table class="changes" id="position-history"><thead><tr><th>when</th><th>by</th><th>old</th><th>new</th></tr></thead><tbody>
${newestFirst.map(
  (c) => html`<tr><td>${formatTime(c.changedAt)}</td><td>${c.run ? html`<a href="${c.run.href}">${c.run.dagId} / ${c.run.runId}</a>` : c.changedBy}</td>
<td class="num">${c.oldValue ?? "–"}</td><td class="num">${c.newValue ?? "–"}</td></tr>`,
)}</tbody></table>
${history.length > 20 ? html`<p class="muted">the newest 20 of ${history.length} changes; all of them on <a href="${webPaths.variable("world_position")}">the variable's page</a></p>` : ""}`;
}

function dqWhy(check: DqCheckResult): SafeHtml {
  if (check.status === "pass") return html`<span class="muted">–</span>`;
  return html`<ul class="dq-why">${check.failed_days.map(
    (d) => html`<li data-failed-day="${d.date}">${d.date}: ${d.failed_rows} failed of ${d.reference_rows} reference / ${d.actual_rows} actual rows${
      d.offending_keys.length > 0 ? html`; keys: <code>${d.offending_keys.join(", ")}</code>` : ""
    }</li>`,
  )}</ul>`;
}

function dqStatus(status: "pass" | "fail"): SafeHtml {
  return html`<span class="badge ${status === "pass" ? "state-success" : "state-failed"}" data-status="${status}">${status}</span>`;
}

function renderDq(dq: DqResults): SafeHtml {
  if (dq.latest.length === 0) return html`<p class="muted" data-empty="dq">no published dq_check results yet</p>`;
  const red = dq.latest.filter((c) => c.status === "fail");
  const headline =
    red.length === 0
      ? html`<p id="dq-headline" class="dq-green">every check green (${dq.latest.length} checks)</p>`
      : html`<p id="dq-headline" class="error-text">red: ${red.map((c) => c.check).join(", ")}</p>`;
  const checks = [...new Set([...dq.latest.map((c) => c.check), ...dq.runs.flatMap((r) => Object.keys(r.checks))])].sort();
  const strip = (check: string) =>
    dq.runs.map((run) => {
      const cell = run.checks[check];
      const cls = cell === undefined ? "state-none" : cell.status === "pass" ? "state-success" : "state-failed";
      const title = `${run.run_id} (${run.started_at}): ${cell ? `${cell.status}, ${cell.failed_rows} failed rows` : "not recorded"}`;
      return html`<a class="sq ${cls}" href="${webPaths.run(DQ_DAG, run.run_id)}" title="${title}" data-run="${run.run_id}" data-status="${cell?.status ?? "none"}"></a>`;
    });
  return html`${headline}
<table id="dq-latest"><thead><tr><th>check</th><th>status</th><th class="num">days</th><th class="num">failed rows</th><th>why</th><th>run</th></tr></thead><tbody>
${dq.latest.map(
  (c) => html`<tr data-check="${c.check}" data-status="${c.status}"><td>${c.check}</td><td>${dqStatus(c.status)}</td><td class="num">${c.days}</td>
<td class="num" data-failed-rows>${c.failed_rows}</td><td>${dqWhy(c)}</td><td><a href="${webPaths.run(DQ_DAG, c.run_id)}">${c.run_id}</a></td></tr>`,
)}</tbody></table>
<h3>History over the last ${dq.runs.length} dq_check runs <span class="muted">(oldest left)</span></h3>
<table id="dq-history">${checks.map((check) => html`<tr data-check="${check}"><th>${check}</th><td><span class="squares">${strip(check)}</span></td></tr>`)}</table>`;
}

function renderKafka(partitions: readonly PartitionOffsets[]): SafeHtml {
  if (partitions.length === 0) return html`<p class="muted" data-empty="kafka">no world topics</p>`;
  const rows = partitions.flatMap((p) => {
    const groups = p.groups.length > 0 ? p.groups : [null];
    return groups.map(
      (g) => html`<tr data-topic="${p.topic}" data-partition="${p.partition}" data-group="${g?.group ?? ""}"><td>${p.topic}</td><td class="num">${p.partition}</td>
<td class="num" data-end-offset>${p.end_offset}</td><td>${g?.group ?? html`<span class="muted">no group</span>`}</td>
<td class="num" data-committed>${g?.committed ?? "–"}</td><td class="num" data-lag>${g?.lag ?? "–"}</td></tr>`,
    );
  });
  return html`<table id="kafka-offsets"><thead><tr><th>topic</th><th class="num">partition</th><th class="num">end offset</th><th>group</th><th class="num">committed</th><th class="num">lag</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function renderServices(services: readonly ServiceView[]): SafeHtml {
  const rows = services.map(
    (s) => html`<tr data-service="${s.name}" data-healthy="${String(s.healthy)}" data-state="${s.state ?? ""}"><td>${s.name}</td>
<td><span class="badge ${s.healthy ? "state-success" : "state-failed"}">${s.healthy ? "ok" : "FAIL"}</span></td><td>${s.state ?? html`<span class="muted">–</span>`}</td>
<td class="num" data-restarts>${s.restarts ?? "–"}</td><td>${s.detail}</td><td class="muted">${s.lastExit ?? "–"}</td></tr>`,
  );
  return html`<table id="stand-services"><thead><tr><th>service</th><th>health</th><th>keeper</th><th class="num">restarts</th><th>detail</th><th>last exit</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function mibText(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The snapshots with a restore button each (a world_restore run, through the same-origin page action). */
function renderSnapshots(view: SnapshotsView): SafeHtml {
  if (view.snapshots.length === 0) return html`<p class="muted" data-empty="snapshots">no snapshots yet: <code>make snapshot NAME=…</code> saves the world</p>`;
  const rows = view.snapshots.map((s) => {
    const restorable = s.state === "complete" && s.schemaIsToday === true;
    const button = restorable
      ? html`<button type="button" class="run-action" data-snapshot="${s.name}" data-action="${webPaths.triggerAction("world_restore")}" data-body="${JSON.stringify({ conf: { name: s.name } })}">Restore</button><span class="run-action-result" role="status"></span>`
      : html`<span class="muted">${s.problem ?? s.state}</span>`;
    return html`<tr data-snapshot="${s.name}"><td>${s.name}</td><td>${s.state}</td><td class="num">${s.position ?? "–"}</td><td>${s.takenAt ? formatTime(s.takenAt) : "–"}</td>
<td class="num">${mibText(s.ownBytes)}</td><td class="num">${mibText(s.sharedBytes)}</td><td><code>${s.schema ?? "–"}</code></td><td>${button}</td></tr>`;
  });
  const restores = view.restores.map((r) => html`<li>${r.restoredAt ? formatTime(r.restoredAt) : "?"}: <strong>${r.snapshot}</strong> (position ${r.toPosition}) over position ${r.fromPosition ?? "unset"}, <a href="${webPaths.run("world_restore", r.runId)}">${r.runId}</a></li>`);
  return html`<table id="world-snapshots"><thead><tr><th>name</th><th>state</th><th class="num">position</th><th>taken at</th><th class="num">disk (own)</th><th class="num">shared</th><th>schema</th><th></th></tr></thead><tbody>${rows}</tbody></table>
<p class="muted">A restore replaces the whole world (both nodes, ZooKeeper, Kafka and its group offsets, world_position); it waits for a running world DAG.</p>
${restores.length > 0 ? html`<ul id="world-restores">${restores}</ul>` : ""}`;
}

function renderSchema(schema: WorldSchemaView): SafeHtml {
  const cls = schema.status === "in_sync" ? "state-success" : schema.status === "drift" ? "state-failed" : "state-queued";
  return html`<p id="schema-summary"><span class="badge ${cls}" data-schema-status="${schema.status}">${schema.status.replaceAll("_", " ")}</span>
${Object.entries(schema.summary).map(([k, n]) => html` <span class="muted">${k}</span> ${n}`)}</p>
${schema.note ? html`<p class="muted">${schema.note}</p>` : ""}<p><a href="${webPaths.schema()}">file by file on the schema page</a></p>`;
}

function renderMetrics(m: MetricsHistoryView): SafeHtml {
  const sampled = m.lag.filter((v) => v !== null).length;
  const chart = (id: string, name: string, values: (number | null)[]) =>
    html`<figure class="layer" data-history="${id}"><figcaption><strong>${name}</strong></figcaption>
${stackedBarChart({ id: `history-${id}`, labels: m.minutes, series: [{ name, counts: values.map((v) => v ?? 0) }], height: 90, seriesClass: () => "c5" })}</figure>`;
  return html`<p><a href="${m.prometheusUrl}/alerts" id="prometheus-link">Prometheus</a> keeps the stand's metrics (<a href="${m.prometheusUrl}/graph">graphs</a>, <a href="${m.prometheusUrl}/targets">targets</a>); the last hour, per minute (UTC), ${sampled} of ${m.minutes.length} minutes sampled:</p>
<div class="small-multiples">${chart("lag", "consumer lag of hits", m.lag)}${chart("placed", "rows placed per minute", m.placed)}</div>`;
}

export function renderWorldBody(view: WorldView): SafeHtml {
  const running =
    view.activeRuns.length === 0
      ? html`<span class="muted">no world run active</span>`
      : html`running: ${view.activeRuns.map((r) => html`<a href="${r.href}" data-active-run="${r.dagId}">${r.dagId} / ${r.runId}</a> `)}`;
  return html`<div id="world" data-generated-at="${view.generatedAt}">
<p class="muted">Generated ${formatTime(view.generatedAt)}, the newest ${view.days} days; ${running}. JSON: <a href="${WORLD_API_PATH}?days=${view.days}"><code>GET ${WORLD_API_PATH}</code></a>.</p>
<section id="world-position"><h2>Position</h2>
${partOr("position", view.position, (p) => html`<p><span class="position-value" id="position-value">${p.value ?? "not set"}</span> <span class="muted">world_position (played days)</span></p>${positionHistory(p.history)}`)}</section>
<section id="world-layers"><h2>Rows per day</h2>${partOr("ClickHouse layers", view.layers, renderLayers)}</section>
<section id="world-errors"><h2>Refused hits per day, by reason</h2>${partOr("ClickHouse errors", view.errors, (d) => seriesChart("errors", d, true))}</section>
<section id="world-dq"><h2>Data quality</h2>${partOr("ClickHouse dq", view.dq, renderDq)}</section>
<section id="world-classes"><h2>purchase_vs_orders classes per order day</h2>${partOr("ClickHouse classes", view.classes, (d) => seriesChart("classes", d, true))}</section>
<section id="world-kafka"><h2>Kafka offsets and lag</h2>${partOr("Kafka", view.kafka, renderKafka)}</section>
<section id="world-metrics"><h2>Lag and rows placed, the last hour</h2>${view.metrics === null ? html`<p class="muted">no Prometheus wired in</p>` : partOr("Prometheus", view.metrics, renderMetrics)}</section>
<section id="world-services"><h2>Stand services</h2>${view.services === null ? html`<p class="muted">not the local-process stand: no services wired in</p>` : partOr("services", view.services, renderServices)}</section>
<section id="world-snapshots-part"><h2>Snapshots</h2>${view.snapshots === null ? html`<p class="muted">no snapshot store wired in</p>` : partOr("snapshots", view.snapshots, renderSnapshots)}</section>
<section id="world-schema"><h2>Schema</h2>${view.schema === null ? html`<p class="muted">no schema status wired in</p>` : partOr("schema", view.schema, renderSchema)}</section>
</div>`;
}

export function renderWorldPage(view: WorldView): string {
  const query = view.days === WORLD_DAYS_DEFAULT ? "" : `?days=${view.days}`;
  return renderPage({
    title: "World",
    pageKind: "world",
    nav: "world",
    refreshUrl: `/ui/data/world${query}`,
    active: view.active,
    body: html`<h1>World</h1>${renderWorldBody(view)}`,
  });
}
