// The run page as HTML: header (state, conf, parent link), the task table with duration bars on
// the run's time axis (SVG, so no inline styles are needed under the CSP), and the selected log.
import { renderDagGraph } from "../dag-graph.ts";
import { dataPathOf, html, webPaths, type SafeHtml } from "../html.ts";
import { formatTime, renderPage, renderPager, stateBadge } from "../layout.ts";
import type { LogView, RunHeaderView, RunView, TaskRowView, TimeAxisView } from "./run-view.ts";

function renderParentLink(run: RunHeaderView): SafeHtml {
  if (!run.parent) return html``;
  const { parent } = run;
  return html`<p class="parent-link">Started by the waiting trigger
    <a id="parent-run-link" href="${parent.href}">${parent.dagId} / ${parent.runId}${parent.taskId ? html` / ${parent.taskId}` : ""}</a></p>`;
}

function renderRunHeader(run: RunHeaderView): SafeHtml {
  return html`<p class="crumbs"><a href="${webPaths.dagList()}">DAGs</a> › <a href="${run.dagHref}">${run.dagId}</a> ›</p>
<h1>Run <span class="run-id">${run.runId}</span> <span id="run-state">${stateBadge(run.state)}</span></h1>
${renderParentLink(run)}
<dl class="run-facts" id="run-facts">
  <dt>type</dt><dd>${run.runType} (by ${run.triggeredBy})</dd>
  <dt>DAG version</dt><dd id="run-dag-version">${run.version === null ? "–" : html`<a href="${run.version.href}">v${run.version.number}</a>`}</dd>
  <dt>queued</dt><dd>${formatTime(run.queuedAt)}</dd>
  <dt>started</dt><dd data-fact="start">${formatTime(run.startDate)}</dd>
  <dt>ended</dt><dd data-fact="end">${formatTime(run.endDate)}</dd>
  <dt>duration</dt><dd data-fact="duration">${run.duration}</dd>
  ${run.note === null ? "" : html`<dt>note</dt><dd>${run.note}</dd>`}
  <dt>waiting for</dt><dd data-fact="waiting" id="run-waiting-for">${run.waitingFor ?? "–"}</dd>
</dl>
<div class="run-actions" id="run-actions">
  <button type="button" class="run-action" id="mark-failed" data-action="${webPaths.runStateAction(run.dagId, run.runId)}" data-body='{"state":"failed"}'>Mark failed</button>
  <button type="button" class="run-action" id="mark-success" data-action="${webPaths.runStateAction(run.dagId, run.runId)}" data-body='{"state":"success"}'>Mark success</button>
  <button type="button" class="run-action" id="clear-failed" data-action="${webPaths.runClearAction(run.dagId, run.runId)}" data-body='{}'>Clear failed tasks</button>
  ${run.newerVersion === null ? "" : html`<button type="button" class="run-action" id="clear-on-latest" data-action="${webPaths.runClearAction(run.dagId, run.runId)}" data-body='{"run_on_latest_version":true}' title="Move the run to the DAG's latest version, then clear its failed tasks: tasks that version no longer has end removed, new ones run">Clear on latest version (v${run.newerVersion.number})</button>`}
  <span class="run-action-result" role="status"></span>
</div>
<details class="conf" open><summary>conf</summary><pre id="run-conf">${run.confText}</pre></details>`;
}

export function renderBar(task: TaskRowView): SafeHtml {
  if (!task.bar) return html`<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true"></svg>`;
  return html`<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" aria-label="${task.taskId}: ${task.duration}">
    <rect class="state-${task.state}" x="${task.bar.x}" y="1" width="${task.bar.width}" height="8"></rect></svg>`;
}

function renderTaskRow(task: TaskRowView): SafeHtml {
  return html`<tr data-task="${task.taskId}" class="${task.selected ? "selected" : ""}">
  <th><a href="${task.href}">${task.taskId}</a></th>
  <td>${stateBadge(task.state)}</td>
  <td class="num">${task.tryNumber}/${task.maxTries}</td>
  <td class="num">${task.duration}</td>
  <td class="bar-cell">${renderBar(task)}</td>
  <td>${task.child ? html`<a class="child-run-link" href="${task.child.href}">child run ${task.child.dagId} / ${task.child.runId}</a>` : ""}
    ${task.error ? html`<div class="error-text">${task.error}</div>` : ""}</td>
</tr>`;
}

function renderAxis(axis: TimeAxisView): SafeHtml {
  return html`<div class="axis" id="time-axis">${axis.ticks.map((tick) => html`<span>${tick.label}</span>`)}</div>`;
}

function renderLogLines(log: LogView): SafeHtml {
  if (log.lines.length === 0) return html`<pre id="log-lines" class="log"><span class="muted">(no log lines for this try yet)</span></pre>`;
  return html`<pre id="log-lines" class="log">${log.lines.map(
    (line) => html`<span class="log-line level-${line.level}"><span class="log-at">${formatTime(line.at)}</span> <span class="log-level">${line.level.toUpperCase()}</span> ${line.message}
</span>`,
  )}</pre>`;
}

export function renderLog(log: LogView | null, runPath: string): SafeHtml {
  if (!log) return html`<section id="log"><h2>Log</h2><p class="muted">No task has started yet.</p></section>`;
  const tryLinks = log.tries.map((t) =>
    t.selected ? html`<strong aria-current="true">try ${t.tryNumber}</strong>` : html`<a href="${t.href}">try ${t.tryNumber}</a>`,
  );
  const hrefFor = (offset: number) => {
    const url = new URL(runPath, "http://x");
    url.searchParams.set("task", log.taskId);
    url.searchParams.set("try", String(log.tryNumber));
    if (offset > 0) url.searchParams.set("log_offset", String(offset));
    return `${url.pathname}${url.search}`;
  };
  return html`<section id="log" data-task="${log.taskId}" data-try="${log.tryNumber}">
  <h2>Log of <span id="log-task">${log.taskId}</span>, try ${log.tryNumber}</h2>
  <nav class="tries" aria-label="tries">${tryLinks}</nav>
  ${renderLogLines(log)}
  ${renderPager(log.page, hrefFor, "lines")}
</section>`;
}

function renderRunGraph(view: RunView): SafeHtml {
  if (view.graph === null || view.run.version === null) return html``;
  const { dagId, runId } = view.run;
  const states = new Map(view.tasks.map((t) => [t.taskId, t.state]));
  return html`<h2>Graph <span class="muted">(v${view.run.version.number}, the version this run was made from)</span></h2>
<div class="graph-container" id="run-graph">${renderDagGraph({
    id: `${dagId}-run`,
    tasks: view.graph,
    states,
    taskHref: (taskId) => webPaths.run(dagId, runId, { taskId }),
    dagHref: (id) => webPaths.dag(id),
  })}</div>`;
}

export function renderRunPage(view: RunView, selectedPath: string): string {
  const runPath = webPaths.run(view.run.dagId, view.run.runId);
  const body = html`${renderRunHeader(view.run)}
<h2>Tasks</h2>
<table class="tasks" id="tasks">
  <thead><tr><th>task</th><th>state</th><th>try</th><th>duration</th><th class="bar-cell">${renderAxis(view.axis)}</th><th></th></tr></thead>
  <tbody>${view.tasks.map(renderTaskRow)}</tbody>
</table>
${renderRunGraph(view)}
${renderLog(view.log, runPath)}`;
  return renderPage({
    title: `${view.run.dagId} / ${view.run.runId}`,
    pageKind: "run",
    nav: "dags",
    refreshUrl: dataPathOf(selectedPath),
    active: view.active,
    body,
  });
}
