// A DAG's versions and its source at each (Airflow's Code view and version picker): the versions
// newest first, paged, each linking to its source; the selected one (the latest unless ?version=)
// shown as the file the DAG processor parsed, with the graph that version declared.
import type { DagTaskRecord, RunnerService } from "../../runner/index.ts";
import { renderDagGraph } from "../dag-graph.ts";
import { html, webPaths, type SafeHtml } from "../html.ts";
import { formatTime, renderPage, renderPager, type PageInfo } from "../layout.ts";

export const VERSIONS_PER_PAGE = 50;

export interface DagVersionRowView {
  versionNumber: number;
  createdAt: string;
  fileloc: string;
  /** The first 12 hex digits of the bundle's sha256; null for a DAG given in code. */
  codeHash: string | null;
  href: string;
  selected: boolean;
}

export interface DagCodeView {
  dagId: string;
  dagHref: string;
  versions: DagVersionRowView[];
  page: PageInfo;
  /** null: the DAG has no versions (given to the engine in code). */
  selected: { versionNumber: number; fileloc: string; content: string | null; tasks: DagTaskRecord[] } | null;
}

/** Throws DagNotFoundError, or DagVersionNotFoundError for a version the DAG never had. */
export async function buildDagCodeView(runner: RunnerService, dagId: string, versionNumber: number | undefined, offset: number): Promise<DagCodeView> {
  const source = await runner.getDagSource(dagId, versionNumber ?? null);
  const page = await runner.listDagVersions(dagId, { limit: VERSIONS_PER_PAGE, offset, descending: true });
  const selectedNumber = source.versionNumber;
  const selectedVersion =
    selectedNumber === null ? undefined : (page.items.find((v) => v.versionNumber === selectedNumber) ?? (await runner.getDagVersion(dagId, selectedNumber)));
  const tasks = selectedNumber === null ? [] : await runner.getVersionTasks(dagId, selectedNumber);
  return {
    dagId,
    dagHref: webPaths.dag(dagId),
    versions: page.items.map((v) => ({
      versionNumber: v.versionNumber,
      createdAt: v.createdAt.toISOString(),
      fileloc: v.fileloc,
      codeHash: v.codeHash === null ? null : v.codeHash.slice(0, 12),
      href: webPaths.dagCode(dagId, { version: v.versionNumber }),
      selected: v.versionNumber === selectedNumber,
    })),
    page: { offset, limit: VERSIONS_PER_PAGE, total: page.totalEntries },
    selected:
      selectedNumber === null || selectedVersion === undefined
        ? null
        : { versionNumber: selectedNumber, fileloc: selectedVersion.fileloc, content: source.content, tasks },
  };
}

function renderVersionRow(v: DagVersionRowView): SafeHtml {
  const label = v.selected ? html`<strong aria-current="true">v${v.versionNumber}</strong>` : html`<a href="${v.href}">v${v.versionNumber}</a>`;
  return html`<tr data-version="${v.versionNumber}" class="${v.selected ? "selected" : ""}">
  <th>${label}</th><td>${formatTime(v.createdAt)}</td><td><code>${v.fileloc}</code></td><td><code>${v.codeHash ?? "–"}</code></td>
</tr>`;
}

function renderSelected(view: DagCodeView): SafeHtml {
  const { selected } = view;
  if (!selected) return html`<p class="muted">This DAG has no versions: it was given to the engine in code, not parsed from a file.</p>`;
  const source =
    selected.content === null
      ? html`<p class="muted">The source of this version was not kept.</p>`
      : html`<pre class="source" id="dag-source" data-version="${selected.versionNumber}">${selected.content}</pre>`;
  return html`<h2>Code of v${selected.versionNumber} <span class="muted">(${selected.fileloc})</span></h2>
${source}
<h2>Graph of v${selected.versionNumber}</h2>
<div class="graph-container">${renderDagGraph({ id: `${view.dagId}-v${selected.versionNumber}`, tasks: selected.tasks, dagHref: (id) => webPaths.dag(id) })}</div>`;
}

export function renderDagCodePage(view: DagCodeView): string {
  const body = html`<p class="crumbs"><a href="${webPaths.dagList()}">DAGs</a> › <a href="${view.dagHref}">${view.dagId}</a> ›</p>
<h1>Code and versions of ${view.dagId}</h1>
<h2>Versions</h2>
<table class="versions" id="dag-versions">
  <thead><tr><th>version</th><th>created</th><th>file</th><th>code sha256</th></tr></thead>
  <tbody>${view.versions.map(renderVersionRow)}</tbody>
</table>
${renderPager(view.page, (offset) => webPaths.dagCode(view.dagId, { offset }), "versions", { previous: "‹ newer", next: "older ›" })}
${renderSelected(view)}`;
  return renderPage({ title: `${view.dagId} · code`, pageKind: "dag-code", nav: "dags", body });
}
