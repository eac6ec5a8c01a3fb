// The DAG files that do not import now (Airflow's import errors): each file, when the DAG processor
// last tried it, and the error with its stack (the file and line it names). A file that is fixed
// leaves the list at its next parse; the DAGs it declared before keep their last good version.
import type { RunnerService } from "../../runner/index.ts";
import { html, webPaths, type SafeHtml } from "../html.ts";
import { countOf, formatTime, renderPage } from "../layout.ts";

export interface ImportErrorView {
  id: number;
  filename: string;
  timestamp: string;
  stackTrace: string;
}

export interface ImportErrorsView {
  errors: ImportErrorView[];
}

export async function buildImportErrorsView(runner: RunnerService): Promise<ImportErrorsView> {
  const errors = await runner.listImportErrors();
  return {
    errors: errors.map((e) => ({ id: e.id, filename: e.filename, timestamp: e.timestamp.toISOString(), stackTrace: e.stackTrace })),
  };
}

/** The DAG list's line about them: nothing when every file imports. */
export function renderImportErrorNotice(count: number): SafeHtml {
  if (count === 0) return html``;
  return html`<p class="notice import-error-notice" id="import-error-notice">${count === 1 ? "1 DAG file does" : `${count} DAG files do`} not import:
  <a href="${webPaths.importErrors()}">see the import errors</a>.</p>`;
}

function renderError(e: ImportErrorView): SafeHtml {
  return html`<section class="import-error" data-import-error="${e.id}" data-file="${e.filename}">
  <h2><code>${e.filename}</code></h2>
  <p class="muted">parsed ${formatTime(e.timestamp)} · import error ${e.id}</p>
  <pre class="log stack-trace">${e.stackTrace}</pre>
</section>`;
}

export function renderImportErrorsPage(view: ImportErrorsView): string {
  const body = html`<p class="crumbs"><a href="${webPaths.dagList()}">DAGs</a> ›</p>
<h1>Import errors</h1>
${
  view.errors.length === 0
    ? html`<p class="muted" id="no-import-errors">Every DAG file imports.</p>`
    : html`<p>${countOf(view.errors.length, "file")} in the DAG folders ${view.errors.length === 1 ? "does" : "do"} not import. Fix the file: the DAG processor parses it again within a second or two.</p>
${view.errors.map(renderError)}`
}`;
  return renderPage({ title: "Import errors", pageKind: "import-errors", nav: "import-errors", body });
}
