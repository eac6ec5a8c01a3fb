// A DAG's page: its controls and a grid of runs (columns, oldest left) by tasks (rows), each cell
// coloured by the task instance's state and linking to that task in the run page. Paged by runs.
import type { RunnerService, DagRunRecord, TaskInstanceRecord, TaskState } from "../../runner/index.ts";
import { dataPathOf, html, webPaths, type SafeHtml } from "../html.ts";
import { renderPager, renderPage, type PageInfo } from "../layout.ts";
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
  /** One per task row, in the order of GridView.taskIds. */
  cells: GridCellView[];
}

export interface GridView {
  dag: DagControlsView;
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
  return {
    ...runSquareView(run),
    label: `${queued.slice(5, 10)} ${queued.slice(11, 16)}`,
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

export async function buildGridView(runner: RunnerService, dagId: string, offset: number): Promise<GridView> {
  const dag = await runner.getDag(dagId);
  const page = await runner.listRuns(dagId, { limit: GRID_RUNS_PER_PAGE, offset, order: "desc" });
  const oldestFirst = [...page.items].reverse();
  const instances = await Promise.all(oldestFirst.map((run) => runner.listTaskInstances(dagId, run.runId)));
  const taskIds = gridRows(dag.taskIds, oldestFirst);
  return {
    dag: dagControlsView(dag),
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
      <span class="run-label">${run.label}</span></th>`,
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

export function renderGridPage(view: GridView): string {
  const { dag } = view;
  const path = webPaths.dag(dag.dagId, view.page.offset);
  const body = html`<p class="crumbs"><a href="${webPaths.dagList()}">DAGs</a> ›</p>
<h1>${dag.dagId}</h1>
<p class="description">${dag.description}</p>
<div class="dag-controls" data-dag-row="${dag.dagId}">
  <span>schedule: ${dag.schedule ?? "manual"} · max active runs: ${dag.maxActiveRuns}</span>
  ${renderPauseSwitch(dag)}
  ${renderTriggerForm(dag)}
</div>
<div id="grid-container">${renderGridTable(view)}</div>
${renderPager(view.page, (offset) => webPaths.dag(dag.dagId, offset), "runs", { previous: "‹ newer", next: "older ›" })}`;
  return renderPage({ title: dag.dagId, pageKind: "dag-grid", nav: "dags", refreshUrl: dataPathOf(path), active: view.active, body });
}
