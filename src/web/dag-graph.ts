// A DAG's task graph drawn on the server as SVG (Airflow's Graph view): one column per depth (a
// task sits one column right of its deepest upstream), edges as curves with an arrow, and in each
// node the task's id, its retries and timeout, and for a waiting trigger the DAG it starts (a
// link). Drawn from a version's serialized tasks, so a DAG shows its graph before its first run
// and a run shows the graph of the version it was made from. Geometry goes in attributes and
// colours in classes (web.css): the CSP allows no inline style. A node's state stripe carries
// data-graph-task, so the page script recolours it as a run goes on (browser/web.ts).
import type { DagTaskRecord, TaskState } from "../runner/index.ts";
import { html, type SafeHtml } from "./html.ts";
import { formatDuration } from "./layout.ts";

export interface GraphInput {
  /** Identifies the graph in the page (data-graph). */
  id: string;
  /** In a topological order (as a version keeps them). */
  tasks: readonly DagTaskRecord[];
  /** A run's task states; without it the nodes carry no state. */
  states?: ReadonlyMap<string, TaskState>;
  /** Where a node links (a run's task, its log); none when absent. */
  taskHref?: (taskId: string) => string;
  /** Where a waiting trigger's target DAG links. */
  dagHref: (dagId: string) => string;
}

export interface GraphNode {
  task: DagTaskRecord;
  column: number;
  row: number;
}

const NODE_H = 64;
const GAP_X = 56;
const GAP_Y = 14;
const PAD = 10;
const CHAR_W = 7;
/** The facts' smaller font. */
const FACT_W = 6;
const MIN_W = 150;
const MAX_W = 280;
const STRIPE = 6;

/** The node's lines under its id: retries (and their delay), and timeout. */
export function taskFactLines(task: DagTaskRecord): [string, string] {
  const retries = task.retries === 0 ? "no retries" : `retries ${task.retries} (every ${formatDuration(task.retryDelayMs)})`;
  const timeout = task.executionTimeoutMs === null ? "no timeout" : `timeout ${formatDuration(task.executionTimeoutMs)}`;
  return [retries, timeout];
}

export function taskFacts(task: DagTaskRecord): string {
  return taskFactLines(task).join(" · ");
}

/**
 * Columns by depth, rows within a column by the mean row of each task's upstream (one barycentre
 * pass, which keeps a chain straight and fans out in declaration order). Upstream ids that are
 * not tasks of the graph are ignored.
 */
export function layoutGraph(tasks: readonly DagTaskRecord[]): GraphNode[] {
  const column = new Map<string, number>();
  for (const task of tasks) {
    const depths = task.upstream.map((id) => column.get(id)).filter((d): d is number => d !== undefined);
    column.set(task.taskId, depths.length === 0 ? 0 : Math.max(...depths) + 1);
  }
  const row = new Map<string, number>();
  const columns = new Map<number, DagTaskRecord[]>();
  for (const task of tasks) {
    const c = column.get(task.taskId) ?? 0;
    columns.set(c, [...(columns.get(c) ?? []), task]);
  }
  const nodes: GraphNode[] = [];
  for (const c of [...columns.keys()].sort((a, b) => a - b)) {
    const inColumn = columns.get(c) ?? [];
    const weight = (task: DagTaskRecord, index: number): number => {
      const rows = task.upstream.map((id) => row.get(id)).filter((r): r is number => r !== undefined);
      return rows.length === 0 ? index : rows.reduce((a, b) => a + b, 0) / rows.length;
    };
    const ordered = inColumn.map((task, index) => ({ task, w: weight(task, index), index })).sort((a, b) => a.w - b.w || a.index - b.index);
    ordered.forEach(({ task }, r) => {
      row.set(task.taskId, r);
      nodes.push({ task, column: c, row: r });
    });
  }
  return nodes;
}

function clip(text: string, width: number, charWidth = CHAR_W): string {
  const max = Math.max(4, Math.floor((width - 2 * PAD - STRIPE) / charWidth));
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function nodeWidth(tasks: readonly DagTaskRecord[]): number {
  const needed = tasks.map((t) =>
    Math.max(t.taskId.length * CHAR_W, (t.triggerDagId ? t.triggerDagId.length + 9 : 0) * FACT_W, ...taskFactLines(t).map((line) => line.length * FACT_W)),
  );
  return Math.round(Math.min(MAX_W, Math.max(MIN_W, Math.max(0, ...needed) + 2 * PAD + STRIPE)));
}

export function renderDagGraph(input: GraphInput): SafeHtml {
  if (input.tasks.length === 0) return html`<p class="muted graph-empty">This version declares no tasks.</p>`;
  const nodes = layoutGraph(input.tasks);
  const width = nodeWidth(input.tasks);
  const columns = Math.max(...nodes.map((n) => n.column)) + 1;
  const rows = Math.max(...nodes.map((n) => n.row)) + 1;
  const svgW = PAD * 2 + columns * width + (columns - 1) * GAP_X;
  const svgH = PAD * 2 + rows * NODE_H + (rows - 1) * GAP_Y;
  const marker = `arrow-${input.id.replace(/[^\w-]/g, "_")}`;
  const at = new Map(nodes.map((n) => [n.task.taskId, { x: PAD + n.column * (width + GAP_X), y: PAD + n.row * (NODE_H + GAP_Y) }]));

  const edges = nodes.flatMap((n) =>
    n.task.upstream.flatMap((up) => {
      const from = at.get(up);
      const to = at.get(n.task.taskId);
      if (!from || !to) return [];
      const x1 = from.x + width;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x - 2;
      const y2 = to.y + NODE_H / 2;
      const bend = (x2 - x1) / 2;
      return [
        html`<path class="graph-edge" d="M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}" marker-end="url(#${marker})" data-edge="${up}→${n.task.taskId}"></path>`,
      ];
    }),
  );

  const boxes = nodes.map((n) => {
    const { task } = n;
    const pos = at.get(task.taskId) ?? { x: 0, y: 0 };
    const state = input.states?.get(task.taskId);
    const facts = taskFacts(task);
    const [retries, timeout] = taskFactLines(task);
    const textX = pos.x + STRIPE + PAD;
    const id = input.taskHref
      ? html`<a href="${input.taskHref(task.taskId)}"><text class="graph-id" x="${textX}" y="${pos.y + 16}">${clip(task.taskId, width)}</text></a>`
      : html`<text class="graph-id" x="${textX}" y="${pos.y + 16}">${clip(task.taskId, width)}</text>`;
    const third =
      task.kind === "waitingTrigger" && task.triggerDagId !== null
        ? html`<a class="graph-trigger" href="${input.dagHref(task.triggerDagId)}" data-triggers="${task.triggerDagId}"><text class="graph-fact graph-link" x="${textX}" y="${pos.y + 57}">${clip(`starts ▸ ${task.triggerDagId}`, width, FACT_W)}</text></a>`
        : "";
    const title = [task.taskId, task.description, facts, task.triggerDagId ? `starts ${task.triggerDagId} and waits for it` : "", state ? `state: ${state}` : ""]
      .filter(Boolean)
      .join("\n");
    return html`<g class="graph-task kind-${task.kind}" data-task="${task.taskId}" data-retries="${task.retries}" data-timeout-ms="${task.executionTimeoutMs ?? ""}">
<title>${title}</title>
<rect class="graph-node" x="${pos.x}" y="${pos.y}" width="${width}" height="${NODE_H}" rx="5"></rect>
<rect class="graph-state state-${state ?? "none"}" data-graph-task="${task.taskId}" x="${pos.x}" y="${pos.y}" width="${STRIPE}" height="${NODE_H}"></rect>
${id}
<text class="graph-fact" x="${textX}" y="${pos.y + 31}">${clip(retries, width, FACT_W)}</text>
<text class="graph-fact" x="${textX}" y="${pos.y + 44}">${clip(timeout, width, FACT_W)}</text>
${third}
</g>`;
  });

  return html`<svg class="dag-graph" data-graph="${input.id}" viewBox="0 0 ${svgW} ${svgH}" width="${svgW}" height="${svgH}" role="img" aria-label="task graph of ${input.id}">
<defs><marker id="${marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path class="graph-arrow" d="M0,0 L10,5 L0,10 z"></path></marker></defs>
${edges}${boxes}</svg>`;
}
