// The page shell (head, navigation, the static script and stylesheet), the pager, and the small
// formatting helpers every page shares. The page script (browser/web.ts, served as static/web.js) formats the same way.
import { html, webPaths, type SafeHtml } from "./html.ts";

export interface PageInfo {
  offset: number;
  limit: number;
  total: number;
}

export interface PageShell {
  title: string;
  /** Which renderer the client script uses when it refreshes the page. */
  pageKind: "dag-list" | "dag-grid" | "dag-code" | "import-errors" | "run" | "variables" | "variable" | "schema" | "world" | "error";
  /** JSON twin of the page, polled while `active`; absent for pages that never change alone. */
  refreshUrl?: string;
  active?: boolean;
  nav: "dags" | "import-errors" | "variables" | "schema" | "world";
  body: SafeHtml;
}

/** "2026-01-02 03:04:05Z": UTC, second precision, sortable. */
export function formatTime(date: Date | string | null): string {
  if (date === null) return "–";
  const iso = typeof date === "string" ? date : date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return minutes < 60 ? `${minutes} min ${seconds} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** "1 run", "27 runs". */
export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

export function stateBadge(state: string): SafeHtml {
  return html`<span class="badge state-${state}" data-state="${state}">${state.replaceAll("_", " ")}</span>`;
}

export function renderPager(
  page: PageInfo,
  hrefFor: (offset: number) => string,
  noun: string,
  labels: { previous: string; next: string } = { previous: "‹ previous", next: "next ›" },
): SafeHtml {
  if (page.total === 0) return html`<p class="pager">no ${noun}</p>`;
  const first = page.offset + 1;
  const last = Math.min(page.offset + page.limit, page.total);
  const previous = page.offset > 0 ? Math.max(0, page.offset - page.limit) : null;
  const next = last < page.total ? page.offset + page.limit : null;
  return html`<nav class="pager" aria-label="pages">
    ${previous === null ? html`<span class="disabled">${labels.previous}</span>` : html`<a href="${hrefFor(previous)}" rel="prev">${labels.previous}</a>`}
    <span class="pager-range">${noun} ${first}–${last} of ${page.total}</span>
    ${next === null ? html`<span class="disabled">${labels.next}</span>` : html`<a href="${hrefFor(next)}" rel="next">${labels.next}</a>`}
  </nav>`;
}

function navLink(href: string, label: string, current: boolean): SafeHtml {
  return current ? html`<a href="${href}" aria-current="page">${label}</a>` : html`<a href="${href}">${label}</a>`;
}

export function renderPage(shell: PageShell): string {
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${shell.title} · DAG runner</title>
<link rel="icon" href="/ui/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/static/web.css">
<script type="module" src="/ui/static/web.js"></script>
</head>
<body data-page="${shell.pageKind}" data-refresh="${shell.refreshUrl ?? ""}" data-active="${shell.active ? "true" : "false"}">
<header class="top">
  <strong class="brand">DAG runner</strong>
  <nav class="main-nav">
    ${navLink(webPaths.dagList(), "DAGs", shell.nav === "dags")}
    ${navLink(webPaths.importErrors(), "Import errors", shell.nav === "import-errors")}
    ${navLink(webPaths.variables(), "Variables", shell.nav === "variables")}
    ${navLink(webPaths.schema(), "Schema", shell.nav === "schema")}
    ${navLink(webPaths.world(), "World", shell.nav === "world")}
  </nav>
  <span id="live-status" class="live-status" role="status"></span>
</header>
<main>
${shell.body}
</main>
</body>
</html>
`;
  return page.text;
}
