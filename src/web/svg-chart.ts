// Bar charts drawn on the server as SVG: one bar per day, its series stacked. Geometry goes in
// attributes (x, y, width, height) and colours in classes (web.css), so the CSP needs no inline
// style; each bar carries its numbers in data-* attributes and a <title> the browser shows on hover.
import { html, type SafeHtml } from "./html.ts";

export interface ChartSeries {
  name: string;
  counts: readonly number[];
}

export interface BarChartInput {
  /** Identifies the chart in the page (data-chart). */
  id: string;
  labels: readonly string[];
  series: readonly ChartSeries[];
  /** Class per series index: `c<index>` unless given. */
  seriesClass?: (name: string, index: number) => string;
  height?: number;
}

const BAR = 14;
const GAP = 3;
const LEFT = 56;
const BOTTOM = 18;
const TOP = 8;

function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** A stacked bar per label; the y axis from 0 to the tallest stack. */
export function stackedBarChart(input: BarChartInput): SafeHtml {
  const height = input.height ?? 120;
  const plot = height - BOTTOM - TOP;
  const width = Math.max(220, LEFT + Math.max(1, input.labels.length) * (BAR + GAP) + GAP);
  const totals = input.labels.map((_, i) => input.series.reduce((sum, s) => sum + Math.max(0, s.counts[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const classOf = input.seriesClass ?? ((_name: string, index: number) => `c${index % 8}`);
  const bars = input.labels.map((label, i) => {
    const x = LEFT + GAP + i * (BAR + GAP);
    let base = TOP + plot;
    const segments = input.series.map((s, k) => {
      const count = s.counts[i] ?? 0;
      const h = (Math.max(0, count) / max) * plot;
      base -= h;
      return html`<rect class="${classOf(s.name, k)}" x="${x}" y="${base.toFixed(1)}" width="${BAR}" height="${h.toFixed(1)}" data-date="${label}" data-series="${s.name}" data-count="${count}"><title>${label} ${s.name}: ${formatCount(count)}</title></rect>`;
    });
    return html`<g class="bar" data-date="${label}" data-total="${totals[i] ?? 0}">${segments}</g>`;
  });
  const first = input.labels[0];
  const last = input.labels.at(-1);
  const axis = html`<line class="axis-line" x1="${LEFT}" y1="${TOP + plot}" x2="${width}" y2="${TOP + plot}"></line>
<text class="axis-text" x="${LEFT - 4}" y="${TOP + 8}" text-anchor="end">${formatCount(max)}</text>
<text class="axis-text" x="${LEFT - 4}" y="${TOP + plot}" text-anchor="end">0</text>
${first === undefined ? "" : html`<text class="axis-text" x="${LEFT + GAP}" y="${height - 4}">${first}</text>`}
${last === undefined || input.labels.length < 8 ? "" : html`<text class="axis-text" x="${width - GAP}" y="${height - 4}" text-anchor="end">${last}</text>`}`;
  return html`<svg class="chart" data-chart="${input.id}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${input.id}">${axis}${bars}</svg>`;
}

/** The legend of a chart's series, with the same classes as its bars. */
export function chartLegend(series: readonly { name: string }[], seriesClass?: (name: string, index: number) => string): SafeHtml {
  const classOf = seriesClass ?? ((_name: string, index: number) => `c${index % 8}`);
  return html`<ul class="legend">${series.map(
    (s, k) => html`<li><svg class="swatch" viewBox="0 0 10 10" width="10" height="10"><rect class="${classOf(s.name, k)}" x="0" y="0" width="10" height="10"></rect></svg>${s.name}</li>`,
  )}</ul>`;
}
