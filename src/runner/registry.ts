// The DAGs a runner knows: the current version of each (what new runs are made from), and every
// version it has loaded (what a run made from that version executes to its end). The DAG processor
// replaces the current set as files change; a set is refused whole when two DAGs share an id, a
// waiting trigger names an unknown DAG, or waiting triggers form a loop (a run that waits for
// itself, directly or through others, would never end).
import type { Dag, TaskDefinition } from "./dag.ts";
import { DagDefinitionError, DagNotFoundError } from "./errors.ts";

export class DagRegistry {
  private byId = new Map<string, Dag>();
  private readonly byVersion = new Map<string, Dag>();
  private readonly versionOf = new Map<string, string>();
  private markReady: () => void = () => undefined;
  /** Its DAGs come from the DAG processor (replace), not from the code that built it. */
  readonly pending: boolean;
  /** Settles when the registry holds its first set (at once for DAGs given in code). */
  readonly ready: Promise<void>;

  /** `pending`: the set comes later (replace), from the DAG processor. */
  constructor(dags: readonly Dag[], options: { pending?: boolean } = {}) {
    this.pending = options.pending ?? false;
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    this.byId = DagRegistry.check(dags);
    if (!options.pending) this.markReady();
  }

  /** Throws DagDefinitionError naming the first DAG that makes the set invalid. */
  static check(dags: readonly Dag[]): Map<string, Dag> {
    const byId = new Map<string, Dag>();
    for (const dag of dags) {
      if (byId.has(dag.id)) throw new DagDefinitionError(dag.id, null, "two DAGs have this id");
      byId.set(dag.id, dag);
    }
    for (const dag of dags) checkTriggers(byId, dag);
    checkTriggerLoops(byId);
    return byId;
  }

  /** The current set becomes `dags` (each with the version it is, when it has one); throws, changing nothing, when the set is invalid. */
  replace(dags: readonly { dag: Dag; versionId: string | null }[]): void {
    const byId = DagRegistry.check(dags.map((d) => d.dag));
    this.byId = byId;
    this.versionOf.clear();
    for (const { dag, versionId } of dags) {
      if (versionId === null) continue;
      this.versionOf.set(dag.id, versionId);
      this.byVersion.set(versionId, dag);
    }
    this.markReady();
  }

  /** Remembers the DAG a version is (loaded for a run made from it). */
  rememberVersion(versionId: string, dag: Dag): void {
    this.byVersion.set(versionId, dag);
  }

  /** The DAG as a version of it is, when this runner has loaded that version. */
  version(versionId: string): Dag | undefined {
    return this.byVersion.get(versionId);
  }

  /** The version the current DAG of this id is, when it has one. */
  currentVersion(dagId: string): string | undefined {
    return this.versionOf.get(dagId);
  }

  get size(): number {
    return this.byId.size;
  }

  list(): Dag[] {
    return [...this.byId.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  has(dagId: string): boolean {
    return this.byId.has(dagId);
  }

  /** Throws DagNotFoundError. */
  get(dagId: string): Dag {
    const dag = this.byId.get(dagId);
    if (!dag) throw new DagNotFoundError(dagId);
    return dag;
  }

  task(dagId: string, taskId: string): TaskDefinition | undefined {
    return this.byId.get(dagId)?.task(taskId);
  }

}

function checkTriggers(byId: ReadonlyMap<string, Dag>, dag: Dag): void {
  for (const task of dag.tasks.values()) {
    if (task.kind === "waitingTrigger" && !byId.has(task.triggerDagId)) {
      throw new DagDefinitionError(dag.id, task.id, `waits for DAG '${task.triggerDagId}', which is not loaded`);
    }
  }
}

function triggeredBy(dag: Dag): string[] {
  return [...dag.tasks.values()].flatMap((t) => (t.kind === "waitingTrigger" ? [t.triggerDagId] : []));
}

function checkTriggerLoops(byId: ReadonlyMap<string, Dag>): void {
  const done = new Set<string>();
  const visit = (dagId: string, path: string[]): void => {
    if (path.includes(dagId)) {
      const loop = [...path.slice(path.indexOf(dagId)), dagId];
      throw new DagDefinitionError(dagId, null, `waiting triggers form a loop: ${loop.join(" -> ")}`);
    }
    const dag = byId.get(dagId);
    if (done.has(dagId) || !dag) return;
    for (const child of triggeredBy(dag)) visit(child, [...path, dagId]);
    done.add(dagId);
  };
  for (const dagId of byId.keys()) visit(dagId, []);
}
