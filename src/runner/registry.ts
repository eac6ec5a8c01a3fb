// The set of DAGs a runner knows, loaded once at start. Rejects duplicate DAG ids, waiting
// triggers that name an unknown DAG, and waiting-trigger loops between DAGs (a run that waits
// for itself, directly or through others, would never end).
import type { Dag, TaskDefinition } from "./dag.ts";
import { DagDefinitionError, DagNotFoundError } from "./errors.ts";

export class DagRegistry {
  private readonly byId = new Map<string, Dag>();

  constructor(dags: readonly Dag[]) {
    for (const dag of dags) {
      if (this.byId.has(dag.id)) throw new DagDefinitionError(dag.id, null, "two DAGs have this id");
      this.byId.set(dag.id, dag);
    }
    for (const dag of dags) this.checkTriggers(dag);
    this.checkTriggerLoops();
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

  private checkTriggers(dag: Dag): void {
    for (const task of dag.tasks.values()) {
      if (task.kind === "waitingTrigger" && !this.byId.has(task.triggerDagId)) {
        throw new DagDefinitionError(dag.id, task.id, `waits for DAG '${task.triggerDagId}', which is not loaded`);
      }
    }
  }

  private triggeredBy(dag: Dag): string[] {
    return [...dag.tasks.values()].flatMap((t) => (t.kind === "waitingTrigger" ? [t.triggerDagId] : []));
  }

  private checkTriggerLoops(): void {
    const done = new Set<string>();
    const visit = (dagId: string, path: string[]): void => {
      if (path.includes(dagId)) {
        const loop = [...path.slice(path.indexOf(dagId)), dagId];
        throw new DagDefinitionError(dagId, null, `waiting triggers form a loop: ${loop.join(" -> ")}`);
      }
      if (done.has(dagId)) return;
      for (const child of this.triggeredBy(this.get(dagId))) visit(child, [...path, dagId]);
      done.add(dagId);
    };
    for (const dagId of this.byId.keys()) visit(dagId, []);
  }
}
