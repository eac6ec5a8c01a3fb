// A DAG's page: its controls, its file (where it was parsed from, when, its latest version, stale
// or failing to import), the latest version's task graph (drawn before the first run too), and a
// grid of runs (columns, oldest left, each with its DAG version) by tasks (rows), each cell
// coloured by the task instance's state and linking to that task in the run page. Paged by runs.
import type { RunnerService, DagRunRecord, DagSummary, DagTaskRecord, TaskInstanceRecord, TaskState } from "../../runner/index.ts";
import { renderDagGraph } from "../dag-graph.ts";
import { dataPathOf, html, webPaths, type SafeHtml } from "../html.ts";
import { formatTime, renderPager, renderPage, type PageInfo } from "../layout.ts";
import { dagControlsView, renderPauseSwitch, renderTriggerForm, type DagControlsView } from "./dag-controls.ts";
import { isActiveRunState, runSquareView, type RunSquareView } from "./dag-list.ts";

export const GRID_RUNS_PER_PAGE = 25;

export interface GridCellView {
  /** null: the run declares no such task (an older or newer shape of the DAG). */
  state: TaskState | null;
  href: string;
  title: string;
}

export interface GridRunView extends RunSquareView {
  /** "01-02 03:04", for the column header. */
  label: string;
  /** "v3": the DAG version the run was made from; null for a run older than versions. */
  version: string | null;
  /** One per task row, in the order of GridView.taskIds. */
  cells: GridCellView[];
}

/** Where the DAG comes from, as the DAG processor last saw it. */
export interface DagFileView {
  fileloc: string;
  lastParsedTime: string | null;
  /** The latest version's number; null for a DAG given to the engine in code. */
  version: number | null;
  codeHref: string;
  isStale: boolean;
  hasImportErrors: boolean;
  importErrorsHref: string;
}

export interface GridView {
  dag: DagControlsView;
  file: DagFileView;
  /** The latest version's tasks, for its graph. */
  tasks: DagTaskRecord[];
  taskIds: string[];
  /** Oldest first (left to right). */
  runs: GridRunView[];
  page: PageInfo;
  active: boolean;
}

/** The DAG's tasks in declaration order, then any task only older runs declared. */
function gridRows(dagTaskIds: readonly string[], runs: readonly DagRunRecord[]): string[] {
  const rows = [...dagTaskIds];
  const known = new Set(rows);
  for (const run of runs) {
    for (const taskId of run.manifest) {
      if (!known.has(taskId)) {
        known.add(taskId);
        rows.push(taskId);
      }
    }
  }
  return rows;
}

function gridRunView(run: DagRunRecord, taskIds: readonly string[], instances: readonly TaskInstanceRecord[]): GridRunView {
  const byTask = new Map(instances.map((ti) => [ti.taskId, ti]));
  const queued = run.queuedAt.toISOString();
  const version = run.dagVersion === null ? null : `v${run.dagVersion.versionNumber}`;
  const square = runSquareView(run);
  return {
    ...square,
    title: version === null ? square.title : `${square.title} · DAG ${version}`,
    label: `${queued.slice(5, 10)} ${queued.slice(11, 16)}`,
    version,
    cells: taskIds.map((taskId) => {
      const ti = byTask.get(taskId);
      return {
        state: ti?.state ?? null,
        href: webPaths.run(run.dagId, run.runId, { taskId }),
        title: ti ? `${taskId} · ${ti.state} · try ${ti.tryNumber}/${ti.maxTries}` : `${taskId} · not in this run`,
      };
    }),
  };
}

export function dagFileView(dag: DagSummary): DagFileView {
  return {
    fileloc: dag.fileloc,
    lastParsedTime: dag.lastParsedTime?.toISOString() ?? null,
    version: dag.latestVersion?.versionNumber ?? null,
    codeHref: webPaths.dagCode(dag.dagId),
    isStale: dag.isStale,
    hasImportErrors: dag.hasImportErrors,
    importErrorsHref: webPaths.importErrors(),
  };
}

export async function buildGridView(runner: RunnerService, dagId: string, offset: number): Promise<GridView> {
  const dag = await runner.getDag(dagId);
  const page = await runner.listRuns(dagId, { limit: GRID_RUNS_PER_PAGE, offset, order: "desc" });
  const oldestFirst = [...page.items].reverse();
  const instances = await Promise.all(oldestFirst.map((run) => runner.listTaskInstances(dagId, run.runId)));
  const taskIds = gridRows(dag.taskIds, oldestFirst);
  return {
    dag: dagControlsView(dag),
    file: dagFileView(dag),
    tasks: dag.tasks,
    taskIds,
    runs: oldestFirst.map((run, i) => gridRunView(run, taskIds, instances[i] ?? [])),
    page: { offset, limit: GRID_RUNS_PER_PAGE, total: page.totalEntries },
    active: oldestFirst.some((run) => isActiveRunState(run.state)),
  };
}

function renderGridTable(view: GridView): SafeHtml {
  if (view.runs.length === 0) return html`<p class="muted grid-empty">No runs yet.</p>`;
  const header = view.runs.map(
    (run) => html`<th class="run-col"><a class="sq state-${run.state}" href="${run.href}" title="${run.title}" data-run="${run.runId}"></a>
      <span class="run-label">${run.label}</span>${run.version === null ? "" : html`<span class="run-version">${run.version}</span>`}</th>`,
  );
  const rows = view.taskIds.map(
    (taskId, row) => html`<tr data-task="${taskId}"><th class="task-name">${taskId}</th>${view.runs.map((run) => {
      const cell = run.cells[row];
      if (!cell || cell.state === null) return html`<td><span class="cell state-none" title="${cell?.title ?? ""}"></span></td>`;
      return html`<td><a class="cell state-${cell.state}" href="${cell.href}" title="${cell.title}" data-state="${cell.state}"></a></td>`;
    })}</tr>`,
  );
  return html`<table class="grid" id="grid"><thead><tr><th>task \\ run</th>${header}</tr></thead><tbody>${rows}</tbody></table>`;
}

/** The file line, and a notice when the DAG is stale or its file does not import now. */
export function renderDagFile(file: DagFileView): SafeHtml {
  const version = file.version === null ? html`<span class="muted">no version (given in code)</span>` : html`<a href="${file.codeHref}" id="dag-version">v${file.version}</a>`;
  const stale = file.isStale
    ? html`<p class="notice stale-notice" id="stale-notice">Stale: <code>${file.fileloc}</code> no longer declares this DAG (its file was removed or changed). Its runs stay here; it is not scheduled and cannot be triggered.</p>`
    : "";
  const broken = file.hasImportErrors
    ? html`<p class="notice import-error-notice" id="dag-import-error">Its file <code>${file.fileloc}</code> does not import now: this page shows the last version that did. <a href="${file.importErrorsHref}">See the import error</a>.</p>`
    : "";
  return html`<p class="dag-file" id="dag-file">file <code>${file.fileloc}</code> · parsed ${formatTime(file.lastParsedTime)} · version ${version} · <a href="${file.codeHref}">Code</a></p>
${stale}${broken}`;
}

export function renderGridPage(view: GridView): string {
  const { dag } = view;
  const path = webPaths.dag(dag.dagId, view.page.offset);
  const body = html`<p class="crumbs"><a href="${webPaths.dagList()}">DAGs</a> ›</p>
<h1>${dag.dagId}${view.file.isStale ? html` <span class="badge stale-badge">stale</span>` : ""}</h1>
<p class="description">${dag.description}</p>
<div class="dag-controls" data-dag-row="${dag.dagId}">
  <span>schedule: ${dag.schedule ?? "manual"} · max active runs: ${dag.maxActiveRuns}</span>
  ${renderPauseSwitch(dag)}
  ${renderTriggerForm(dag)}
</div>
${renderDagFile(view.file)}
<h2>Graph${view.file.version === null ? "" : html` <span class="muted">(v${view.file.version})</span>`}</h2>
<div class="graph-container" id="graph">${renderDagGraph({ id: dag.dagId, tasks: view.tasks, dagHref: (id) => webPaths.dag(id) })}</div>
<h2>Runs</h2>
<div id="grid-container">${renderGridTable(view)}</div>
${renderPager(view.page, (offset) => webPaths.dag(dag.dagId, offset), "runs", { previous: "‹ newer", next: "older ›" })}`;
  return renderPage({ title: dag.dagId, pageKind: "dag-grid", nav: "dags", refreshUrl: dataPathOf(path), active: view.active, body });
}
