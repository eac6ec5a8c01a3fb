// The DAG list: one row per DAG with its last runs as coloured squares, its pause switch and a
// trigger form. DAGs are paged; each DAG's recent runs are one indexed query (limit RECENT_RUNS).
import { type RunnerService, type DagRunRecord, type RunState, TERMINAL_RUN_STATES } from "../../runner/index.ts";
import { dataPathOf, html, webPaths, type SafeHtml } from "../html.ts";
import { countOf, formatTime, renderPager, renderPage, type PageInfo } from "../layout.ts";
import { dagControlsView, renderPauseSwitch, renderTriggerForm, type DagControlsView } from "./dag-controls.ts";
import { renderImportErrorNotice } from "./import-errors.ts";

export const RECENT_RUNS = 10;
export const DAGS_PER_PAGE = 25;

export interface RunSquareView {
  runId: string;
  state: RunState;
  href: string;
  title: string;
}

export interface DagListRowView extends DagControlsView {
  /** Oldest first, so the newest run is the rightmost square. */
  recentRuns: RunSquareView[];
  totalRuns: number;
  /** Its file no longer declares it: history only. */
  isStale: boolean;
  /** Its file does not import now (the DAG shows its last good version). */
  hasImportErrors: boolean;
  /** The latest version's number; null for a DAG given in code. */
  version: number | null;
}

export interface DagListView {
  page: PageInfo;
  dags: DagListRowView[];
  /** DAG files that do not import now (the notice above the list). */
  importErrorCount: number;
  /** Some run on the page is queued or running: the page keeps refreshing. */
  active: boolean;
}

export function runSquareView(run: DagRunRecord): RunSquareView {
  return {
    runId: run.runId,
    state: run.state,
    href: webPaths.run(run.dagId, run.runId),
    title: `${run.runId} · ${run.state} · queued ${formatTime(run.queuedAt)}`,
  };
}

export function isActiveRunState(state: RunState): boolean {
  return !TERMINAL_RUN_STATES.has(state);
}

export async function buildDagListView(runner: RunnerService, offset: number): Promise<DagListView> {
  const [dagList, importErrors] = await Promise.all([runner.listDags(), runner.listImportErrors()]);
  const all = dagList.sort((a, b) => a.dagId.localeCompare(b.dagId));
  const onPage = all.slice(offset, offset + DAGS_PER_PAGE);
  const dags = await Promise.all(
    onPage.map(async (dag): Promise<DagListRowView> => {
      const runs = await runner.listRuns(dag.dagId, { limit: RECENT_RUNS, offset: 0, order: "desc" });
      return {
        ...dagControlsView(dag),
        recentRuns: runs.items.map(runSquareView).reverse(),
        totalRuns: runs.totalEntries,
        isStale: dag.isStale,
        hasImportErrors: dag.hasImportErrors,
        version: dag.latestVersion?.versionNumber ?? null,
      };
    }),
  );
  return {
    page: { offset, limit: DAGS_PER_PAGE, total: all.length },
    dags,
    importErrorCount: importErrors.length,
    active: dags.some((dag) => dag.recentRuns.some((run) => isActiveRunState(run.state))),
  };
}

export function renderRunSquares(runs: RunSquareView[]): SafeHtml {
  return html`${runs.map((run) => html`<a class="sq state-${run.state}" href="${run.href}" title="${run.title}" data-run="${run.runId}"></a>`)}`;
}

function renderDagRow(dag: DagListRowView): SafeHtml {
  return html`<tr data-dag-row="${dag.dagId}">
  <td class="dag-id"><a href="${dag.href}">${dag.dagId}</a>${dag.version === null ? "" : html` <span class="muted dag-version">v${dag.version}</span>`}${
    dag.isStale ? html` <span class="badge stale-badge">stale</span>` : ""
  }${dag.hasImportErrors ? html` <a class="badge import-error-badge" href="${webPaths.importErrors()}">import error</a>` : ""}<div class="description">${dag.description}</div></td>
  <td>${dag.schedule ?? html`<span class="muted">manual</span>`}</td>
  <td class="pause-cell">${renderPauseSwitch(dag)}</td>
  <td><span class="squares" data-squares-for="${dag.dagId}">${renderRunSquares(dag.recentRuns)}</span>
    <span class="muted run-count">${countOf(dag.totalRuns, "run")}</span></td>
  <td>${renderTriggerForm(dag)}</td>
</tr>`;
}

export function renderDagListPage(view: DagListView): string {
  const path = webPaths.dagList(view.page.offset);
  const body = html`<h1>DAGs</h1>
${renderImportErrorNotice(view.importErrorCount)}
<table class="dag-list">
  <thead><tr><th>DAG</th><th>schedule</th><th>on</th><th>last ${RECENT_RUNS} runs</th><th>trigger</th></tr></thead>
  <tbody>${view.dags.map(renderDagRow)}</tbody>
</table>
${renderPager(view.page, webPaths.dagList, "DAGs")}`;
  return renderPage({ title: "DAGs", pageKind: "dag-list", nav: "dags", refreshUrl: dataPathOf(path), active: view.active, body });
}
