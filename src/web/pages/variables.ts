// Variables: a paged list with each variable's latest changes (who, when, which run), and one page
// per key with its whole change history, paged.
import type { RunnerService, VariableChange } from "../../runner/index.ts";
import { html, webPaths, type SafeHtml } from "../html.ts";
import { countOf, formatTime, renderPage, renderPager, type PageInfo } from "../layout.ts";

export const VARIABLES_PER_PAGE = 25;
export const CHANGES_IN_LIST = 5;
export const CHANGES_PER_PAGE = 50;

export interface VariableChangeView {
  oldValue: string | null;
  newValue: string | null;
  changedAt: string;
  changedBy: string;
  run: { dagId: string; runId: string; href: string } | null;
}

export interface VariableRowView {
  key: string;
  value: string;
  description: string | null;
  updatedAt: string;
  href: string;
  /** Newest first, at most CHANGES_IN_LIST. */
  latestChanges: VariableChangeView[];
  totalChanges: number;
}

export interface VariablesView {
  page: PageInfo;
  variables: VariableRowView[];
}

export interface VariableHistoryView {
  key: string;
  /** null when the variable was deleted (its history is kept). */
  current: { value: string; description: string | null } | null;
  changes: VariableChangeView[];
  page: PageInfo;
}

function changeView(change: VariableChange): VariableChangeView {
  return {
    oldValue: change.oldValue,
    newValue: change.newValue,
    changedAt: change.changedAt.toISOString(),
    changedBy: change.changedBy,
    run: change.dagId !== null && change.runId !== null ? { dagId: change.dagId, runId: change.runId, href: webPaths.run(change.dagId, change.runId) } : null,
  };
}

/** The history comes in the order it was written (runner.variable_history's id); newest first is
 * that order reversed. Not by time: two changes within one millisecond compare equal as Dates (a
 * full make test once showed "hand-set" above "changed"). */
function newestFirst(changes: readonly VariableChange[]): VariableChange[] {
  return [...changes].reverse();
}

export async function buildVariablesView(runner: RunnerService, offset: number): Promise<VariablesView> {
  const page = await runner.listVariables({ limit: VARIABLES_PER_PAGE, offset });
  const variables = await Promise.all(
    page.items.map(async (variable): Promise<VariableRowView> => {
      const changes = newestFirst(await runner.variableHistory(variable.key));
      return {
        key: variable.key,
        value: variable.value,
        description: variable.description,
        updatedAt: variable.updatedAt.toISOString(),
        href: webPaths.variable(variable.key),
        latestChanges: changes.slice(0, CHANGES_IN_LIST).map(changeView),
        totalChanges: changes.length,
      };
    }),
  );
  return { page: { offset, limit: VARIABLES_PER_PAGE, total: page.totalEntries }, variables };
}

/** Throws VariableNotFoundError when the key never existed. */
export async function buildVariableHistoryView(runner: RunnerService, key: string, offset: number): Promise<VariableHistoryView> {
  const changes = newestFirst(await runner.variableHistory(key));
  let current: VariableHistoryView["current"] = null;
  try {
    const variable = await runner.getVariable(key);
    current = { value: variable.value, description: variable.description };
  } catch (err) {
    if (changes.length === 0) throw err; // never existed
  }
  return {
    key,
    current,
    changes: changes.slice(offset, offset + CHANGES_PER_PAGE).map(changeView),
    page: { offset, limit: CHANGES_PER_PAGE, total: changes.length },
  };
}

function renderValue(value: string | null): SafeHtml {
  return value === null ? html`<span class="muted">(none)</span>` : html`<code class="value">${value}</code>`;
}

function renderChangesTable(changes: readonly VariableChangeView[]): SafeHtml {
  if (changes.length === 0) return html`<p class="muted">no recorded changes</p>`;
  return html`<table class="changes"><thead><tr><th>when</th><th>who</th><th>run</th><th>old</th><th>new</th></tr></thead><tbody>
${changes.map(
  (change) => html`<tr><td>${formatTime(change.changedAt)}</td><td>${change.changedBy}</td>
  <td>${change.run ? html`<a href="${change.run.href}">${change.run.dagId} / ${change.run.runId}</a>` : html`<span class="muted">–</span>`}</td>
  <td>${renderValue(change.oldValue)}</td><td>${renderValue(change.newValue)}</td></tr>`,
)}</tbody></table>`;
}

function renderVariableRow(variable: VariableRowView): SafeHtml {
  return html`<section class="variable" data-variable="${variable.key}">
  <h2><a href="${variable.href}">${variable.key}</a></h2>
  ${variable.description ? html`<p class="description">${variable.description}</p>` : ""}
  <p>value: ${renderValue(variable.value)} <span class="muted">updated ${formatTime(variable.updatedAt)}</span></p>
  <details ${variable.totalChanges > 0 ? html`open` : ""}><summary>history (${countOf(variable.totalChanges, "change")}${
    variable.totalChanges > CHANGES_IN_LIST ? html`, latest ${CHANGES_IN_LIST} shown` : ""
  })</summary>
  ${renderChangesTable(variable.latestChanges)}
  ${variable.totalChanges > CHANGES_IN_LIST ? html`<a href="${variable.href}">all ${variable.totalChanges} changes</a>` : ""}
  </details>
</section>`;
}

export function renderVariablesPage(view: VariablesView): string {
  const body = html`<h1>Variables</h1>
${view.variables.map(renderVariableRow)}
${renderPager(view.page, webPaths.variables, "variables")}`;
  return renderPage({ title: "Variables", pageKind: "variables", nav: "variables", body });
}

export function renderVariableHistoryPage(view: VariableHistoryView): string {
  const body = html`<p class="crumbs"><a href="${webPaths.variables()}">Variables</a> ›</p>
<h1>${view.key}</h1>
${view.current
  ? html`<p>value: ${renderValue(view.current.value)}</p>${view.current.description ? html`<p class="description">${view.current.description}</p>` : ""}`
  : html`<p class="muted">deleted; its history is kept</p>`}
<h2>History</h2>
${renderChangesTable(view.changes)}
${renderPager(view.page, (offset) => webPaths.variable(view.key, offset), "changes", { previous: "‹ newer", next: "older ›" })}`;
  return renderPage({ title: view.key, pageKind: "variable", nav: "variables", body });
}
