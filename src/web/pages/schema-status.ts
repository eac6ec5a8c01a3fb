// Schema status: the world's schema ledger and drift, the same object GET /api/v2/system/schema
// answers, asked of the function the server wired in (src/server/app.ts) so the page and the API
// cannot disagree. The answer's shape is not fixed here: arrays of records become tables, other
// values a key/value list or JSON text.
import { ApiProblem } from "../../api/index.ts";
import { html, type SafeHtml } from "../html.ts";
import { renderPage } from "../layout.ts";

export const SCHEMA_ROUTE = "/api/v2/system/schema";

export type SchemaStatusView =
  | { kind: "available"; body: unknown }
  | { kind: "not-available" }
  | { kind: "error"; status: number | null; detail: string };

/** Where the schema status comes from; absent when this server has no world wired in. */
export type SchemaStatusSource = () => Promise<unknown>;

export async function buildSchemaStatusView(source: SchemaStatusSource | undefined): Promise<SchemaStatusView> {
  if (!source) return { kind: "not-available" };
  try {
    return { kind: "available", body: await source() };
  } catch (err) {
    if (err instanceof ApiProblem) return { kind: "error", status: err.status, detail: err.message };
    return { kind: "error", status: null, detail: err instanceof Error ? err.message : String(err) };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function renderScalar(value: unknown): SafeHtml {
  if (value === null || value === undefined) return html`<span class="muted">–</span>`;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return html`${String(value)}`;
  return html`<code>${JSON.stringify(value)}</code>`;
}

function renderRecordTable(rows: readonly Record<string, unknown>[]): SafeHtml {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return html`<table class="schema-table"><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}</tr></thead><tbody>
${rows.map((row) => html`<tr>${columns.map((c) => html`<td>${renderScalar(row[c])}</td>`)}</tr>`)}</tbody></table>`;
}

export function renderJsonValue(value: unknown, depth = 0): SafeHtml {
  if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) return renderRecordTable(value);
  if (isRecord(value) && depth < 2) {
    return html`<dl class="schema-facts">${Object.entries(value).map(
      ([key, inner]) => html`<dt>${key}</dt><dd>${renderJsonValue(inner, depth + 1)}</dd>`,
    )}</dl>`;
  }
  if (Array.isArray(value) || isRecord(value)) return html`<pre>${JSON.stringify(value, null, 2)}</pre>`;
  return renderScalar(value);
}

export function renderSchemaStatusPage(view: SchemaStatusView): string {
  let content: SafeHtml;
  if (view.kind === "not-available") {
    content = html`<p class="notice" id="schema-not-available"><strong>Not available yet:</strong> this server has no world wired in
      (<code>GET ${SCHEMA_ROUTE}</code> answers 503). The stand's runner (<code>make up</code>) shows the schema ledger and drift here.</p>`;
  } else if (view.kind === "error") {
    content = html`<p class="notice error-text" id="schema-error">the schema status failed${view.status === null ? "" : ` (${view.status})`}: ${view.detail}</p>`;
  } else {
    content = html`<div id="schema-status">${renderJsonValue(view.body)}</div>`;
  }
  const body = html`<h1>Schema status</h1>
<p class="muted">From <a href="${SCHEMA_ROUTE}"><code>GET ${SCHEMA_ROUTE}</code></a>.</p>
${content}`;
  return renderPage({ title: "Schema status", pageKind: "schema", nav: "schema", body });
}
