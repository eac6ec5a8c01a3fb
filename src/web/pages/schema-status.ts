// Schema status: what GET /api/v2/system/schema answers (the ClickHouse schema ledger and drift),
// asked of this same process over HTTP, so the page shows exactly what the API says. Until that
// route exists (another issue adds it) the page says so plainly. The answer's shape is not fixed
// here: arrays of records become tables, other values a key/value list or JSON text.
import type { Request } from "express";
import { html } from "../html.ts";
import type { SafeHtml } from "../html.ts";
import { renderPage } from "../layout.ts";

export const SCHEMA_ROUTE = "/api/v2/system/schema";
const SCHEMA_FETCH_TIMEOUT_MS = 5000;

export type SchemaStatusView =
  | { kind: "available"; body: unknown }
  | { kind: "not-available" }
  | { kind: "error"; status: number | null; detail: string };

interface AppWithRoutes {
  routeSpecs?: readonly { method: string; path: string }[];
}

/** Whether the API app this router is mounted in declares the route (undefined: cannot tell). */
function apiDeclaresSchemaRoute(req: Request): boolean | undefined {
  const specs = (req.app as unknown as AppWithRoutes).routeSpecs;
  if (specs === undefined) return undefined;
  return specs.some((spec) => spec.method === "get" && spec.path === SCHEMA_ROUTE);
}

/** This server's own address, as the socket that carried the request sees it. */
function ownBaseUrl(req: Request): string {
  const raw = req.socket.localAddress ?? "127.0.0.1";
  const address = raw.startsWith("::ffff:") && raw.includes(".") ? raw.slice("::ffff:".length) : raw;
  return `http://${address.includes(":") ? `[${address}]` : address}:${req.socket.localPort}`;
}

function problemDetail(body: unknown, fallback: string): string {
  if (body !== null && typeof body === "object" && "detail" in body && typeof body.detail === "string") return body.detail;
  return fallback;
}

export async function buildSchemaStatusView(req: Request): Promise<SchemaStatusView> {
  if (apiDeclaresSchemaRoute(req) === false) return { kind: "not-available" };
  let response: Response;
  try {
    response = await fetch(`${ownBaseUrl(req)}${SCHEMA_ROUTE}`, {
      headers: { Accept: "application/json" },
      signal: AbortSignal.timeout(SCHEMA_FETCH_TIMEOUT_MS),
    });
  } catch (err) {
    return { kind: "error", status: null, detail: `the API did not answer ${SCHEMA_ROUTE}: ${String(err)}` };
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: shown as text
  }
  if (response.ok) return { kind: "available", body };
  // an app that cannot tell us its routes: a 404 from it means the route is not there
  if (response.status === 404 && apiDeclaresSchemaRoute(req) === undefined) return { kind: "not-available" };
  return { kind: "error", status: response.status, detail: problemDetail(body, text.slice(0, 500)) };
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
    content = html`<p class="notice" id="schema-not-available"><strong>Not available yet:</strong> this runner's API has no
      <code>GET ${SCHEMA_ROUTE}</code> route. The schema ledger and drift status appear here once it does.</p>`;
  } else if (view.kind === "error") {
    content = html`<p class="notice error-text" id="schema-error">${SCHEMA_ROUTE} answered ${view.status ?? "nothing"}: ${view.detail}</p>`;
  } else {
    content = html`<div id="schema-status">${renderJsonValue(view.body)}</div>`;
  }
  const body = html`<h1>Schema status</h1>
<p class="muted">From <a href="${SCHEMA_ROUTE}"><code>GET ${SCHEMA_ROUTE}</code></a>.</p>
${content}`;
  return renderPage({ title: "Schema status", pageKind: "schema", nav: "schema", body });
}
