// The web view's page script, bundled with page-actions.ts and conf-check.ts into /ui/static/web.js
// (src/web/router.ts). It keeps a page fresh while runs are active by polling the page's JSON twin
// (body[data-refresh]) and updating the DOM, and wires the page actions (page-actions.ts). Data
// only ever reaches the DOM as text (text nodes, setAttribute): never innerHTML.
import { messageOf, wirePageActions } from "./page-actions.ts";
import type { DagListView, GridRunView, GridView, LogView, RefreshedView, RunSquareView, RunView, TaskRowView } from "./views.ts";

const REFRESH_MS = 1500;
const RETRY_MS = 5000;

type AttributeValue = string | number | boolean | null | undefined;
type Child = Node | string | null | undefined | false;

/** Builds an element; string children become text nodes, and null, undefined and false are left out. */
function el(tag: string, attrs: Readonly<Record<string, AttributeValue>> = {}, ...children: (Child | readonly Child[])[]): Element {
  const isSvg = tag === "svg" || tag === "rect";
  const node = isSvg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function formatTime(iso: string | null): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z` : "–";
}

function stateBadge(state: string): Element {
  return el("span", { class: `badge state-${state}`, "data-state": state }, state.replaceAll("_", " "));
}

function setStatus(text: string): void {
  const status = document.getElementById("live-status");
  if (status) status.textContent = text;
}

function byData(attribute: string, value: string, root: ParentNode = document): Element | null {
  return [...root.querySelectorAll(`[${attribute}]`)].find((node) => node.getAttribute(attribute) === value) ?? null;
}

// ---- refresh -----------------------------------------------------------------------------------

const refresh: { timer: number | undefined } = { timer: undefined };

function scheduleRefresh(delayMs: number): void {
  clearTimeout(refresh.timer);
  refresh.timer = setTimeout(() => void refreshOnce(), delayMs);
}

/** Updates the page from its JSON twin: the view model the server rendered it from (src/web/pages). */
async function renderView(page: string | undefined, view: RefreshedView): Promise<void> {
  switch (page) {
    case "world":
      await renderWorld();
      break;
    case "dag-list":
      renderDagList(view as DagListView);
      break;
    case "dag-grid":
      renderDagGrid(view as GridView);
      break;
    case "run":
      renderRun(view as RunView);
      break;
    default:
    // the other pages are not refreshed in place
  }
}

async function refreshOnce(): Promise<void> {
  const url = document.body.dataset.refresh;
  if (!url) return;
  try {
    const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    // The JSON twin is this server's view model; view-contract.ts keeps views.ts in step with it.
    const view = (await response.json()) as RefreshedView;
    await renderView(document.body.dataset.page, view);
    document.body.dataset.active = view.active ? "true" : "false";
    if (view.active) {
      setStatus(`live: refreshing every ${REFRESH_MS / 1000} s`);
      scheduleRefresh(REFRESH_MS);
    } else {
      setStatus(`up to date at ${formatTime(new Date().toISOString())} (nothing running)`);
    }
  } catch (err) {
    setStatus(`refresh failed (${messageOf(err)}); retrying`);
    scheduleRefresh(RETRY_MS);
  }
}

/** Called on load when the page is active, and after this page triggered or unpaused something. */
function startRefresh(): void {
  setStatus(`live: refreshing every ${REFRESH_MS / 1000} s`);
  scheduleRefresh(REFRESH_MS);
}

// ---- renderers (mirror the server's HTML in src/web/pages) -------------------------------------

/**
 * The World page's charts are server-side SVG: rather than draw them twice, the page is read again
 * as the server renders it (its HTML escapes every value, src/web/html.ts) and its #world part is
 * swapped in. DOMParser documents run no script, and nothing is assigned to innerHTML.
 */
async function renderWorld(): Promise<void> {
  const response = await fetch(`${location.pathname}${location.search}`, { headers: { Accept: "text/html" }, credentials: "same-origin" });
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("world");
  const current = document.getElementById("world");
  if (fresh && current) current.replaceWith(document.importNode(fresh, true));
}

function renderSquares(runs: readonly RunSquareView[]): Element[] {
  return runs.map((run) => el("a", { class: `sq state-${run.state}`, href: run.href, title: run.title, "data-run": run.runId }));
}

function syncPauseSwitch(root: Element | null, isPaused: boolean): void {
  const input = root?.querySelector(".pause-switch");
  if (!root || !(input instanceof HTMLInputElement) || input.disabled) return; // disabled: a change of ours is on its way
  input.checked = !isPaused;
  const label = root.querySelector(".switch-label");
  if (label) label.textContent = isPaused ? "paused" : "active";
}

function renderDagList(view: DagListView): void {
  for (const dag of view.dags) {
    const row = byData("data-dag-row", dag.dagId);
    if (!row) continue;
    byData("data-squares-for", dag.dagId, row)?.replaceChildren(...renderSquares(dag.recentRuns));
    const count = row.querySelector(".run-count");
    if (count) count.textContent = dag.totalRuns === 1 ? "1 run" : `${dag.totalRuns} runs`;
    syncPauseSwitch(row, dag.isPaused);
  }
}

function renderGridCell(run: GridRunView, row: number): Element {
  const cell = run.cells[row];
  if (!cell || cell.state === null) return el("td", {}, el("span", { class: "cell state-none", title: cell?.title ?? "" }));
  return el("td", {}, el("a", { class: `cell state-${cell.state}`, href: cell.href, title: cell.title, "data-state": cell.state }));
}

function renderGridTable(view: GridView): Element {
  if (view.runs.length === 0) return el("p", { class: "muted grid-empty" }, "No runs yet.");
  const header = el(
    "tr",
    {},
    el("th", {}, "task \\ run"),
    view.runs.map((run) =>
      el(
        "th",
        { class: "run-col" },
        renderSquares([run]),
        el("span", { class: "run-label" }, run.label),
        run.version === null ? null : el("span", { class: "run-version" }, run.version),
      ),
    ),
  );
  const rows = view.taskIds.map((taskId, row) =>
    el(
      "tr",
      { "data-task": taskId },
      el("th", { class: "task-name" }, taskId),
      view.runs.map((run) => renderGridCell(run, row)),
    ),
  );
  return el("table", { class: "grid", id: "grid" }, el("thead", {}, header), el("tbody", {}, rows));
}

function renderDagGrid(view: GridView): void {
  document.getElementById("grid-container")?.replaceChildren(renderGridTable(view));
  syncPauseSwitch(byData("data-dag-row", view.dag.dagId), view.dag.isPaused);
}

function renderBar(task: TaskRowView): Element {
  const svg = el("svg", { class: "bar", viewBox: "0 0 100 10", preserveAspectRatio: "none", "aria-hidden": task.bar ? null : "true" });
  if (task.bar) {
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `${task.taskId}: ${task.duration}`);
    svg.append(el("rect", { class: `state-${task.state}`, x: task.bar.x, y: 1, width: task.bar.width, height: 8 }));
  }
  return svg;
}

function renderTaskRow(task: TaskRowView): Element {
  return el(
    "tr",
    { "data-task": task.taskId, class: task.selected ? "selected" : "" },
    el("th", {}, el("a", { href: task.href }, task.taskId)),
    el("td", {}, stateBadge(task.state)),
    el("td", { class: "num" }, `${task.tryNumber}/${task.maxTries}`),
    el("td", { class: "num" }, task.duration),
    el("td", { class: "bar-cell" }, renderBar(task)),
    el(
      "td",
      {},
      task.child ? el("a", { class: "child-run-link", href: task.child.href }, `child run ${task.child.dagId} / ${task.child.runId}`) : null,
      task.error ? el("div", { class: "error-text" }, task.error) : null,
    ),
  );
}

function renderLogSection(log: LogView | null): Element[] {
  if (!log) return [el("h2", {}, "Log"), el("p", { class: "muted" }, "No task has started yet.")];
  const tries = log.tries.map((t) =>
    t.selected ? el("strong", { "aria-current": "true" }, `try ${t.tryNumber}`) : el("a", { href: t.href }, `try ${t.tryNumber}`),
  );
  const lines = log.lines.length
    ? log.lines.map((line) =>
        el(
          "span",
          { class: `log-line level-${line.level}` },
          el("span", { class: "log-at" }, formatTime(line.at)),
          " ",
          el("span", { class: "log-level" }, line.level.toUpperCase()),
          ` ${line.message}\n`,
        ),
      )
    : [el("span", { class: "muted" }, "(no log lines for this try yet)")];
  const last = Math.min(log.page.offset + log.page.limit, log.page.total);
  return [
    el("h2", {}, "Log of ", el("span", { id: "log-task" }, log.taskId), `, try ${log.tryNumber}`),
    el("nav", { class: "tries", "aria-label": "tries" }, tries),
    el("pre", { id: "log-lines", class: "log" }, lines),
    el("p", { class: "pager" }, log.page.total ? `lines ${log.page.offset + 1}–${last} of ${log.page.total}` : "no lines"),
  ];
}

function renderRun(view: RunView): void {
  document.getElementById("run-state")?.replaceChildren(stateBadge(view.run.state));
  const facts = document.getElementById("run-facts");
  const setFact = (name: string, text: string): void => {
    const node = facts?.querySelector(`[data-fact="${name}"]`);
    if (node) node.textContent = text;
  };
  setFact("start", formatTime(view.run.startDate));
  setFact("end", formatTime(view.run.endDate));
  setFact("duration", view.run.duration);
  setFact("waiting", view.run.waitingFor ?? "–");
  document.querySelector("#tasks tbody")?.replaceChildren(...view.tasks.map(renderTaskRow));
  // the graph of the run's version (src/web/dag-graph.ts): each node's state stripe follows its task
  for (const task of view.tasks) {
    byData("data-graph-task", task.taskId)?.setAttribute("class", `graph-state state-${task.state}`);
  }
  document.getElementById("time-axis")?.replaceChildren(...view.axis.ticks.map((tick) => el("span", {}, tick.label)));
  const log = document.getElementById("log");
  if (log) {
    log.replaceChildren(...renderLogSection(view.log));
    if (view.log) {
      log.dataset.task = view.log.taskId;
      log.dataset.try = String(view.log.tryNumber);
    }
  }
}

wirePageActions(startRefresh);
if (document.body.dataset.active === "true") startRefresh();
