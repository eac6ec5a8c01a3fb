// HTML for the web view: one escaping helper for text and attribute values, and an `html` tagged
// template that escapes every interpolation unless it is already SafeHtml. Pages are built only
// through `html`, so user data (conf, logs, variable values, descriptions) cannot become markup.
// Attribute values must always be quoted in templates: escaping covers both quote characters.

/** Markup that was produced by `html` (or is a fixed literal); interpolated as-is. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for an HTML text node or a quoted attribute value. */
export function escapeHtml(value: string | number | boolean): string {
  return String(value).replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function renderValue(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(renderValue).join("");
  return escapeHtml(value as string | number | boolean);
}

/** Tagged template: literal parts are trusted markup, interpolations are escaped. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? "";
  values.forEach((value, index) => {
    out += renderValue(value) + (strings[index + 1] ?? "");
  });
  return new SafeHtml(out);
}

/** Web paths with every segment percent-encoded (ids may hold ':', '+', '~'). */
export const webPaths = {
  dagList: (offset = 0) => (offset > 0 ? `/ui/?offset=${offset}` : "/ui/"),
  dag: (dagId: string, offset = 0) => `/ui/dags/${encodeURIComponent(dagId)}${offset > 0 ? `?offset=${offset}` : ""}`,
  run: (dagId: string, runId: string, select?: { taskId: string; tryNumber?: number }) => {
    const base = `/ui/dags/${encodeURIComponent(dagId)}/runs/${encodeURIComponent(runId)}`;
    if (!select) return base;
    const query = new URLSearchParams({ task: select.taskId });
    if (select.tryNumber !== undefined) query.set("try", String(select.tryNumber));
    return `${base}?${query.toString()}`;
  },
  dagCode: (dagId: string, select: { version?: number; offset?: number } = {}) => {
    const query = new URLSearchParams();
    if (select.version !== undefined) query.set("version", String(select.version));
    if (select.offset !== undefined && select.offset > 0) query.set("offset", String(select.offset));
    const search = query.toString();
    return `/ui/dags/${encodeURIComponent(dagId)}/code${search ? `?${search}` : ""}`;
  },
  importErrors: () => "/ui/import-errors",
  variables: (offset = 0) => (offset > 0 ? `/ui/variables?offset=${offset}` : "/ui/variables"),
  variable: (key: string, offset = 0) => `/ui/variables/${encodeURIComponent(key)}${offset > 0 ? `?offset=${offset}` : ""}`,
  schema: () => "/ui/schema",
  world: () => "/ui/world",
  pauseAction: (dagId: string) => `/ui/actions/dags/${encodeURIComponent(dagId)}/pause`,
  triggerAction: (dagId: string) => `/ui/actions/dags/${encodeURIComponent(dagId)}/trigger`,
  runStateAction: (dagId: string, runId: string) => `/ui/actions/dags/${encodeURIComponent(dagId)}/runs/${encodeURIComponent(runId)}/state`,
  runClearAction: (dagId: string, runId: string) => `/ui/actions/dags/${encodeURIComponent(dagId)}/runs/${encodeURIComponent(runId)}/clear`,
};

/** The JSON twin of a page URL, fetched by the page's script to refresh itself. */
export function dataPathOf(pagePath: string): string {
  return pagePath.replace(/^\/ui\//, "/ui/data/");
}
