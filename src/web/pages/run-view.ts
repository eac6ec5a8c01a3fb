// The run page's data: the run (with its parent when a waiting trigger created it), its tasks
// with bars on one time axis shared by the whole run, each waiting trigger's child run, and the
// log of the selected task's selected try, paged by lines; and the graph of the DAG version the run
// was made from (the run keeps that version's tasks to its end, whatever the file says now).
import { TaskInstanceNotFoundError, type RunnerService, type DagRunRecord, type DagTaskRecord, type RunState, type TaskInstanceRecord, type TaskState, type DagVersionRecord, TERMINAL_RUN_STATES, TERMINAL_TASK_STATES } from "../../runner/index.ts";
import { webPaths } from "../html.ts";
import { formatDuration } from "../layout.ts";
import { isActiveRunState } from "./dag-list.ts";
import type { LogView } from "../browser/views.ts";

export const LOG_LINES_PER_PAGE = 1000;

export interface RunLinkView {
  dagId: string;
  runId: string;
  taskId: string | null;
  href: string;
}

export interface RunHeaderView {
  dagId: string;
  runId: string;
  state: RunState;
  runType: string;
  triggeredBy: string;
  note: string | null;
  /** Why a queued run has not started (an exclusive resource and its holder). */
  waitingFor: string | null;
  confText: string;
  queuedAt: string;
  startDate: string | null;
  endDate: string | null;
  duration: string;
  dagHref: string;
  /** The waiting trigger (run and task) that created this run. */
  parent: RunLinkView | null;
  /** The DAG version the run was made from, linking to its code; null for a run older than versions. */
  version: { number: number; href: string } | null;
  /** The DAG's latest version when an ended run is on an older one: the page offers to clear the
   * run onto it (run_on_latest_version). */
  newerVersion: { number: number; href: string } | null;
}

export interface TaskRowView {
  taskId: string;
  state: TaskState;
  tryNumber: number;
  maxTries: number;
  startDate: string | null;
  endDate: string | null;
  duration: string;
  /** Percentages of the run's time axis; null when the task has not started. */
  bar: { x: number; width: number } | null;
  error: string | null;
  /** For a waiting trigger: the child run it started. */
  child: RunLinkView | null;
  href: string;
  selected: boolean;
}

export interface TimeAxisView {
  spanMs: number;
  ticks: { x: number; label: string }[];
}

/** The log section: the same shape the page script reads, so it is declared once, in browser/views.ts (types only). */
export type { LogView };

export interface RunView {
  run: RunHeaderView;
  axis: TimeAxisView;
  tasks: TaskRowView[];
  /** The tasks of the run's DAG version, for its graph; null for a run older than versions. */
  graph: DagTaskRecord[] | null;
  /** null when no task has started yet. */
  log: LogView | null;
  active: boolean;
}

export interface RunSelection {
  taskId?: string;
  tryNumber?: number;
  logOffset: number;
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

function runHeaderView(run: DagRunRecord, latest: DagVersionRecord | null): RunHeaderView {
  const parent =
    run.parentDagId !== null && run.parentRunId !== null
      ? {
          dagId: run.parentDagId,
          runId: run.parentRunId,
          taskId: run.parentTaskId,
          href: webPaths.run(run.parentDagId, run.parentRunId, run.parentTaskId ? { taskId: run.parentTaskId } : undefined),
        }
      : null;
  const end = run.endDate ?? (run.startDate ? new Date() : null);
  return {
    dagId: run.dagId,
    runId: run.runId,
    state: run.state,
    runType: run.runType,
    triggeredBy: run.triggeredBy,
    note: run.note,
    waitingFor: run.waitingFor,
    confText: JSON.stringify(run.conf, null, 2),
    queuedAt: run.queuedAt.toISOString(),
    startDate: iso(run.startDate),
    endDate: iso(run.endDate),
    duration: formatDuration(run.startDate && end ? end.getTime() - run.startDate.getTime() : null),
    dagHref: webPaths.dag(run.dagId),
    parent,
    version: run.dagVersion === null ? null : { number: run.dagVersion.versionNumber, href: webPaths.dagCode(run.dagId, { version: run.dagVersion.versionNumber }) },
    newerVersion:
      latest === null || latest.versionNumber === run.dagVersion?.versionNumber
        ? null
        : { number: latest.versionNumber, href: webPaths.dagCode(run.dagId, { version: latest.versionNumber }) },
  };
}

/** The run's time axis: from its start (or its first task's) to its end, or now while it runs. */
function timeAxis(run: DagRunRecord, tasks: readonly TaskInstanceRecord[], now: number): { startMs: number; spanMs: number } {
  const starts = tasks.flatMap((ti) => (ti.startDate ? [ti.startDate.getTime()] : []));
  const ends = tasks.flatMap((ti) => (ti.endDate ? [ti.endDate.getTime()] : []));
  const startMs = Math.min(run.startDate?.getTime() ?? Infinity, ...starts);
  const endMs = run.endDate ? Math.max(run.endDate.getTime(), ...ends) : now;
  if (!Number.isFinite(startMs)) return { startMs: now, spanMs: 0 };
  return { startMs, spanMs: Math.max(1, endMs - startMs) };
}

function taskBar(ti: TaskInstanceRecord, axis: { startMs: number; spanMs: number }, now: number): TaskRowView["bar"] {
  if (!ti.startDate || axis.spanMs === 0) return null;
  const start = ti.startDate.getTime();
  const end = ti.endDate?.getTime() ?? now;
  const x = ((start - axis.startMs) / axis.spanMs) * 100;
  const width = Math.max(0.4, ((end - start) / axis.spanMs) * 100);
  const round = (n: number) => Math.round(n * 100) / 100;
  return { x: round(Math.min(99.6, Math.max(0, x))), width: round(Math.min(100, width)) };
}

function taskRowView(ti: TaskInstanceRecord, axis: { startMs: number; spanMs: number }, now: number, selected: boolean): TaskRowView {
  const durationMs = ti.durationMs ?? (ti.startDate && !ti.endDate ? now - ti.startDate.getTime() : null);
  return {
    taskId: ti.taskId,
    state: ti.state,
    tryNumber: ti.tryNumber,
    maxTries: ti.maxTries,
    startDate: iso(ti.startDate),
    endDate: iso(ti.endDate),
    duration: formatDuration(durationMs),
    bar: taskBar(ti, axis, now),
    error: ti.error,
    child:
      ti.childDagId !== null && ti.childRunId !== null
        ? { dagId: ti.childDagId, runId: ti.childRunId, taskId: null, href: webPaths.run(ti.childDagId, ti.childRunId) }
        : null,
    href: webPaths.run(ti.dagId, ti.runId, { taskId: ti.taskId }),
    selected,
  };
}

/** The task whose log is shown: the one asked for, else the first failed, else the last started. */
function selectedTask(tasks: readonly TaskInstanceRecord[], wanted: string | undefined): TaskInstanceRecord | undefined {
  if (wanted !== undefined) return tasks.find((ti) => ti.taskId === wanted);
  const started = tasks.filter((ti) => ti.tryNumber > 0);
  return started.find((ti) => ti.state === "failed") ?? started.at(-1);
}

async function logView(runner: RunnerService, ti: TaskInstanceRecord, selection: RunSelection): Promise<LogView | null> {
  if (ti.tryNumber < 1) return null;
  const tryNumber = selection.tryNumber ?? ti.tryNumber;
  const log = await runner.getTaskLog(ti.dagId, ti.runId, ti.taskId, tryNumber);
  const lines = log.lines.slice(selection.logOffset, selection.logOffset + LOG_LINES_PER_PAGE);
  return {
    taskId: ti.taskId,
    tryNumber,
    tries: Array.from({ length: ti.tryNumber }, (_, i) => ({
      tryNumber: i + 1,
      href: webPaths.run(ti.dagId, ti.runId, { taskId: ti.taskId, tryNumber: i + 1 }),
      selected: i + 1 === tryNumber,
    })),
    lines: lines.map((line) => ({ at: line.at.toISOString(), level: line.level, message: line.message })),
    page: { offset: selection.logOffset, limit: LOG_LINES_PER_PAGE, total: log.lines.length },
  };
}

function axisView(spanMs: number): TimeAxisView {
  if (spanMs === 0) return { spanMs, ticks: [] };
  return { spanMs, ticks: [0, 25, 50, 75, 100].map((x) => ({ x, label: formatDuration((spanMs * x) / 100) })) };
}

/** Throws DagNotFoundError / DagRunNotFoundError / TaskInstanceNotFoundError / TryNotFoundError. */
export async function buildRunView(runner: RunnerService, dagId: string, runId: string, selection: RunSelection): Promise<RunView> {
  const run = await runner.getRun(dagId, runId);
  const instances = await runner.listTaskInstances(dagId, runId);
  const now = Date.now();
  const axis = timeAxis(run, instances, now);
  const chosen = selectedTask(instances, selection.taskId);
  if (selection.taskId !== undefined && !chosen) throw new TaskInstanceNotFoundError(dagId, runId, selection.taskId);
  const log = chosen ? await logView(runner, chosen, selection) : null;
  const graph = run.dagVersion === null ? null : await runner.getVersionTasks(dagId, run.dagVersion.versionNumber);
  const tasks = instances.map((ti) => taskRowView(ti, axis, now, ti.taskId === chosen?.taskId));
  // only an ended run can move to the latest version; a running one (polled) costs no extra read
  const latest = TERMINAL_RUN_STATES.has(run.state) ? (await runner.getDag(dagId)).latestVersion : null;
  return {
    run: runHeaderView(run, latest),
    axis: axisView(axis.spanMs),
    tasks,
    graph,
    log,
    active: isActiveRunState(run.state) || instances.some((ti) => !TERMINAL_TASK_STATES.has(ti.state)),
  };
}
