// The typed DAG builder: what a file in dags/ uses to declare a DAG. It produces a Dag, the
// validated, type-erased form the engine runs. Validation happens at build (load) time.
//
//   export default defineDag({ id: "example", params: z.object({ n: z.number() }) })
//     .task("extract", async (ctx) => { ctx.log.info(`n=${ctx.conf.n}`); })
//     .task("load", { upstream: ["extract"], retries: 2 }, async (ctx) => { ... })
//     .waitingTrigger("downstream_dag", { upstream: ["load"], triggerDagId: "other" })
//     .build();
import { z } from "zod";
import { ConfValidationError } from "./errors.ts";
import type { JsonValue, RunConf } from "./types.ts";
import { validateDagShape } from "./dag-validate.ts";

export interface TaskLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Variables as a task sees them; every change is recorded with the task's run. */
export interface TaskVariables {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/** Airflow's XCom from inside a task: small JSON values for the tasks after it (and the API). */
export interface TaskXCom {
  /** Sets a key for this try (return_value is what Airflow's wait `result` collects); replaces a value pushed before. */
  push(key: string, value: JsonValue): Promise<void>;
  /** A value a task of this run pushed in its current try (key: return_value); undefined when none. */
  pull(taskId: string, key?: string): Promise<JsonValue | undefined>;
}

export interface TaskContext<Conf = RunConf> {
  dagId: string;
  runId: string;
  taskId: string;
  tryNumber: number;
  maxTries: number;
  logicalDate: Date | null;
  /** The run's conf, as parsed by the DAG's params schema. */
  conf: Conf;
  /** Aborted at the execution timeout, on lease loss, and when the runner shuts down. */
  signal: AbortSignal;
  log: TaskLog;
  variables: TaskVariables;
  xcom: TaskXCom;
}

/** Returned by a branching task: which of the tasks after it still run. The rest are skipped
 * (and what depends only on skipped tasks is skipped too), so a run can end green early. */
export type BranchResult =
  | { skip: readonly string[] }
  | { follow: readonly string[] }
  | { shortCircuit: true };

export type TaskResult = BranchResult | void | undefined;
export type TaskFn<Conf> = (ctx: TaskContext<Conf>) => Promise<TaskResult> | TaskResult;

export interface TaskOptions {
  upstream?: readonly string[];
  /** Extra tries after the first (Airflow's retries). */
  retries?: number;
  /** Delay before the first retry; doubles each retry up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** The task's signal aborts at this deadline and the try fails then, even if it ignores it. */
  executionTimeoutMs?: number | null;
  description?: string;
}

export interface WaitingTriggerOptions<Conf> extends TaskOptions {
  triggerDagId: string;
  /** The child run's conf; defaults to {}. */
  conf?: (ctx: TaskContext<Conf>) => RunConf | Promise<RunConf>;
}

/** null: manual only. A cron string ("0 * * * *"), or a fixed interval. */
export type Schedule = string | { everySeconds: number } | null;

export interface DagOptions<P extends z.ZodType> {
  id: string;
  description?: string;
  schedule?: Schedule;
  isPausedUponCreation?: boolean;
  maxActiveRuns?: number;
  /** Which errors are worth a retry. An error it calls permanent (false) fails the task at once,
   * whatever retries are left; NonRetryableError is never retried either. Default: every error. */
  isRetryable?: (err: Error) => boolean;
  /** Named resources each run holds exclusively from start to end (the world DAGs: ["world"]).
   * A run that cannot take one stays queued and says who holds it; a run started by a waiting
   * trigger runs inside its ancestors' hold. */
  exclusive?: readonly string[];
  /** Validates (and types) a run's conf; defaults to any JSON object. */
  params?: P;
  /** Defaults for every task's retry and timeout options. */
  defaults?: Omit<TaskOptions, "upstream" | "description">;
  /** Where the DAG is defined, shown in the API (Airflow's fileloc). */
  fileloc?: string;
}

interface TaskCommon {
  id: string;
  description: string;
  upstream: readonly string[];
  retries: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  executionTimeoutMs: number | null;
}

export interface CallableTask extends TaskCommon {
  kind: "callable";
  run: TaskFn<unknown>;
}

export interface WaitingTriggerTask extends TaskCommon {
  kind: "waitingTrigger";
  triggerDagId: string;
  childConf: (ctx: TaskContext<unknown>) => RunConf | Promise<RunConf>;
}

export type TaskDefinition = CallableTask | WaitingTriggerTask;

const TASK_DEFAULTS = { retries: 0, retryDelayMs: 1_000, maxRetryDelayMs: 60_000, executionTimeoutMs: null };

const anyJsonObject = z.record(z.string(), z.json());

/** How a schedule is shown in the API: the cron text, or "@every Ns". */
export function scheduleText(dag: Dag): string | null {
  if (dag.schedule === null) return null;
  return typeof dag.schedule === "string" ? dag.schedule : `@every ${dag.schedule.everySeconds}s`;
}

/** A validated DAG: what the registry holds and the engine runs. */
export class Dag {
  /** Task ids in a topological order; this is the manifest every run declares. */
  readonly taskIds: readonly string[];
  readonly tasks: ReadonlyMap<string, TaskDefinition>;
  private readonly downstreamOf: ReadonlyMap<string, readonly string[]>;

  constructor(
    readonly id: string,
    readonly description: string,
    readonly schedule: Schedule,
    readonly isPausedUponCreation: boolean,
    readonly maxActiveRuns: number,
    readonly exclusive: readonly string[],
    readonly isRetryable: (err: Error) => boolean,
    readonly params: z.ZodType,
    readonly fileloc: string,
    declared: readonly TaskDefinition[],
  ) {
    const shape = validateDagShape(id, declared, { schedule, maxActiveRuns, exclusive });
    this.tasks = new Map(declared.map((task) => [task.id, task]));
    this.taskIds = shape.order;
    this.downstreamOf = shape.downstream;
  }

  task(taskId: string): TaskDefinition | undefined {
    return this.tasks.get(taskId);
  }

  downstream(taskId: string): readonly string[] {
    return this.downstreamOf.get(taskId) ?? [];
  }

  /** Every task reachable downstream of taskId. */
  allDownstream(taskId: string): Set<string> {
    const seen = new Set<string>();
    const stack = [...this.downstream(taskId)];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...this.downstream(next));
    }
    return seen;
  }

  /** Validates a run's conf; ConfValidationError names the first offending field path. */
  parseConf(conf: unknown): RunConf {
    const result = this.params.safeParse(conf ?? {});
    if (result.success) return result.data as RunConf;
    const issue = result.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
    throw new ConfValidationError(this.id, field, issue?.message ?? "invalid");
  }

  paramsJsonSchema(): JsonValue {
    try {
      return z.toJSONSchema(this.params, { unrepresentable: "any" }) as JsonValue;
    } catch {
      // a params schema zod cannot express as JSON Schema: the form then checks nothing, the server still validates
      return {};
    }
  }

  /** Delay before the retry that follows a failed try: exponential, capped, plus up to 25% jitter
   * (never less than the configured delay) so tasks failed by one fault do not retry in lockstep. */
  /**
   * The delay before the retry of a try that failed, counted within the tries the task was last
   * granted (a clear grants retries + 1 more: the backoff starts again after it, as the operator who
   * cleared the task expects a prompt rerun, not the 30 s its 13th try would wait).
   */
  retryDelayInGrant(taskId: string, failedTry: number, maxTries: number, random: () => number = Math.random): number {
    const task = this.tasks.get(taskId);
    const granted = (task?.retries ?? 0) + 1;
    return this.retryDelayMs(taskId, Math.max(1, failedTry - (maxTries - granted)), random);
  }

  retryDelayMs(taskId: string, failedTry: number, random: () => number = Math.random): number {
    const task = this.tasks.get(taskId);
    if (!task) return TASK_DEFAULTS.retryDelayMs;
    const exponent = Math.max(0, failedTry - 1);
    const base = Math.min(task.retryDelayMs * 2 ** exponent, task.maxRetryDelayMs);
    return Math.round(base * (1 + 0.25 * random()));
  }

  /** The tasks a branch result skips; throws naming ids that are not downstream of the task. */
  tasksToSkip(taskId: string, branch: BranchResult): string[] {
    const after = this.allDownstream(taskId);
    if ("shortCircuit" in branch) return [...after];
    if ("follow" in branch) {
      const direct = this.downstream(taskId);
      const unknown = branch.follow.filter((id) => !direct.includes(id));
      if (unknown.length > 0) {
        throw new Error(`branch of task '${taskId}' follows ${unknown.join(", ")}, not directly downstream of it`);
      }
      return direct.filter((id) => !branch.follow.includes(id));
    }
    const unknown = branch.skip.filter((id) => !after.has(id));
    if (unknown.length > 0) {
      throw new Error(`branch of task '${taskId}' skips ${unknown.join(", ")}, not downstream of it`);
    }
    return [...branch.skip];
  }
}

export class DagBuilder<Conf> {
  private readonly declared: TaskDefinition[] = [];

  constructor(private readonly options: DagOptions<z.ZodType>) {}

  task(id: string, fn: TaskFn<Conf>): this;
  task(id: string, options: TaskOptions, fn: TaskFn<Conf>): this;
  task(id: string, optionsOrFn: TaskOptions | TaskFn<Conf>, maybeFn?: TaskFn<Conf>): this {
    const options = typeof optionsOrFn === "function" ? {} : optionsOrFn;
    const fn = typeof optionsOrFn === "function" ? optionsOrFn : maybeFn;
    if (!fn) throw new TypeError(`task '${id}' of DAG '${this.options.id}' has no function`);
    this.declared.push({ ...this.common(id, options), kind: "callable", run: fn as TaskFn<unknown> });
    return this;
  }

  /** A task that triggers a run of another DAG and waits for it without holding a worker. */
  waitingTrigger(id: string, options: WaitingTriggerOptions<Conf>): this {
    const childConf = options.conf ?? (() => ({}));
    this.declared.push({
      ...this.common(id, options),
      kind: "waitingTrigger",
      triggerDagId: options.triggerDagId,
      childConf: childConf as WaitingTriggerTask["childConf"],
    });
    return this;
  }

  build(): Dag {
    const o = this.options;
    return new Dag(
      o.id,
      o.description ?? "",
      o.schedule ?? null,
      o.isPausedUponCreation ?? false,
      o.maxActiveRuns ?? 1,
      Object.freeze([...(o.exclusive ?? [])]),
      o.isRetryable ?? (() => true),
      o.params ?? anyJsonObject,
      o.fileloc ?? `dags/${o.id}.ts`,
      this.declared,
    );
  }

  private common(id: string, options: TaskOptions): TaskCommon {
    const merged = { ...TASK_DEFAULTS, ...this.options.defaults, ...options };
    return {
      id,
      description: options.description ?? "",
      upstream: [...(options.upstream ?? [])],
      retries: merged.retries,
      retryDelayMs: merged.retryDelayMs,
      maxRetryDelayMs: Math.max(merged.maxRetryDelayMs, merged.retryDelayMs),
      executionTimeoutMs: merged.executionTimeoutMs ?? null,
    };
  }
}

/** Starts a DAG definition; the params schema types ctx.conf in every task. */
export function defineDag<P extends z.ZodType = typeof anyJsonObject>(options: DagOptions<P>): DagBuilder<z.output<P>> {
  return new DagBuilder<z.output<P>>(options);
}
