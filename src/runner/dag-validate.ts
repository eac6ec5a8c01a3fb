// Load-time checks of a DAG's shape: ids, duplicates, unknown upstreams, cycles, schedule and
// limits. Every error is a DagDefinitionError naming the DAG and, where there is one, the task.
import { Cron } from "croner";
import { DagDefinitionError } from "./errors.ts";
import { errorMessage } from "../errors.ts";

const ID_PATTERN = /^[A-Za-z0-9_.-]{1,250}$/;

interface ShapeInput {
  id: string;
  upstream: readonly string[];
  retries: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  executionTimeoutMs: number | null;
  kind: string;
  triggerDagId?: string;
}

interface DagLimits {
  schedule: string | { everySeconds: number } | null;
  maxActiveRuns: number;
  exclusive: readonly string[];
}

export interface DagShape {
  /** Task ids in topological order (declaration order among independent tasks). */
  order: string[];
  downstream: Map<string, string[]>;
}

export function validateDagShape(dagId: string, tasks: readonly ShapeInput[], limits: DagLimits): DagShape {
  if (!ID_PATTERN.test(dagId)) {
    throw new DagDefinitionError(dagId, null, "the DAG id may hold only letters, digits, '_', '.', '-'");
  }
  if (tasks.length === 0) throw new DagDefinitionError(dagId, null, "a DAG needs at least one task");
  checkLimits(dagId, limits);
  const ids = new Set<string>();
  for (const task of tasks) {
    if (ids.has(task.id)) throw new DagDefinitionError(dagId, task.id, "the task id is declared twice");
    ids.add(task.id);
    checkTask(dagId, task);
  }
  for (const task of tasks) {
    for (const up of task.upstream) {
      if (!ids.has(up)) throw new DagDefinitionError(dagId, task.id, `upstream task '${up}' does not exist`);
    }
  }
  const downstream = new Map<string, string[]>(tasks.map((t) => [t.id, []]));
  for (const task of tasks) for (const up of task.upstream) downstream.get(up)?.push(task.id);
  return { order: topologicalOrder(dagId, tasks, downstream), downstream };
}

function checkLimits(dagId: string, limits: DagLimits): void {
  for (const resource of limits.exclusive) {
    if (!/^[a-z][a-z0-9_]{0,62}$/.test(resource)) {
      throw new DagDefinitionError(dagId, null, `exclusive resource '${resource}' must be lowercase letters, digits and _ (starting with a letter)`);
    }
  }
  if (new Set(limits.exclusive).size !== limits.exclusive.length) {
    throw new DagDefinitionError(dagId, null, `exclusive lists a resource twice: ${limits.exclusive.join(", ")}`);
  }
  if (!Number.isInteger(limits.maxActiveRuns) || limits.maxActiveRuns < 1) {
    throw new DagDefinitionError(dagId, null, `maxActiveRuns must be an integer >= 1, got ${limits.maxActiveRuns}`);
  }
  const schedule = limits.schedule;
  if (schedule === null) return;
  if (typeof schedule === "string") {
    try {
      new Cron(schedule, { paused: true });
    } catch (err) {
      throw new DagDefinitionError(dagId, null, `schedule '${schedule}' is not a cron expression: ${errorMessage(err)}`);
    }
  } else if (!Number.isInteger(schedule.everySeconds) || schedule.everySeconds < 1) {
    throw new DagDefinitionError(dagId, null, `schedule.everySeconds must be a positive integer`);
  }
}

function checkTask(dagId: string, task: ShapeInput): void {
  if (!ID_PATTERN.test(task.id)) {
    throw new DagDefinitionError(dagId, task.id, "the task id may hold only letters, digits, '_', '.', '-'");
  }
  const nonNegative = { retries: task.retries, retryDelayMs: task.retryDelayMs, maxRetryDelayMs: task.maxRetryDelayMs };
  for (const [name, value] of Object.entries(nonNegative)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new DagDefinitionError(dagId, task.id, `${name} must be a non-negative integer, got ${value}`);
    }
  }
  if (task.executionTimeoutMs !== null && !(task.executionTimeoutMs > 0)) {
    throw new DagDefinitionError(dagId, task.id, `executionTimeoutMs must be positive, got ${task.executionTimeoutMs}`);
  }
  if (task.kind === "waitingTrigger" && task.triggerDagId === dagId) {
    throw new DagDefinitionError(dagId, task.id, "a waiting trigger cannot wait for its own DAG");
  }
}

/** Kahn's algorithm; tasks left over sit on a cycle, which is reported as a path. */
function topologicalOrder(dagId: string, tasks: readonly ShapeInput[], downstream: Map<string, string[]>): string[] {
  const pending = new Map(tasks.map((t) => [t.id, new Set(t.upstream).size]));
  const order: string[] = [];
  const ready = tasks.filter((t) => pending.get(t.id) === 0).map((t) => t.id);
  for (let next = ready.shift(); next !== undefined; next = ready.shift()) {
    order.push(next);
    for (const down of new Set(downstream.get(next))) {
      const left = (pending.get(down) ?? 0) - 1;
      pending.set(down, left);
      if (left === 0) ready.push(down);
    }
  }
  if (order.length === tasks.length) return order;
  const onCycle = findCycle(tasks.filter((t) => !order.includes(t.id)));
  throw new DagDefinitionError(dagId, onCycle[0] ?? null, `dependency cycle: ${onCycle.join(" -> ")}`);
}

function findCycle(remaining: readonly ShapeInput[]): string[] {
  const upstreamOf = new Map(remaining.map((t) => [t.id, t.upstream.filter((u) => remaining.some((r) => r.id === u))]));
  // every remaining task has a remaining upstream, so walking upstream must revisit a task
  const path: string[] = [];
  let current = remaining[0]?.id;
  while (current !== undefined && !path.includes(current)) {
    path.push(current);
    current = upstreamOf.get(current)?.[0];
  }
  if (current === undefined) return path;
  const cycle = path.slice(path.indexOf(current)).reverse();
  return [...cycle, cycle[0] ?? current];
}
