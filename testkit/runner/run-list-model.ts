// The model of Airflow's list filters and sort keys over the run list's rows (run-list-seed.ts):
// what GET …/dagRuns, POST …/dagRuns/list, GET …/taskInstances, POST …/taskInstances/list and
// GET /dags must answer for a set of parameters, computed here from the rows as the database holds
// them, independently of the runner's SQL. A parameter the model has no rule for throws, so a
// filter added to a client or a case is never compared against a guess.
import { TIMETABLES, micro, type DagRow, type RunListData, type RunRow, type TaskInstanceRow } from "./run-list-seed.ts";

export type Sortable = number | string | null;

/** Postgres's order: nulls last ascending, first descending. */
export function compare(a: Sortable, b: Sortable, descending: boolean): number {
  if (a === b) return 0;
  if (a === null) return descending ? -1 : 1;
  if (b === null) return descending ? 1 : -1;
  const c = a < b ? -1 : 1;
  return descending ? -c : c;
}

/** Sorted by the keys, then by the tiebreak in the last key's direction (the runner's unique id). */
export function sortedBy<R>(rows: readonly R[], keys: readonly [(r: R) => Sortable, boolean][], tiebreak: (r: R) => Sortable): R[] {
  const last = keys[keys.length - 1]?.[1] ?? false;
  return [...rows].sort((a, b) => {
    for (const [key, descending] of keys) {
      const c = compare(key(a), key(b), descending);
      if (c !== 0) return c;
    }
    return compare(tiebreak(a), tiebreak(b), last);
  });
}

export function sorted(rows: readonly RunRow[], keys: readonly [(r: RunRow) => Sortable, boolean][]): RunRow[] {
  return sortedBy(rows, keys, (r) => r.id);
}

/** Seconds from start to end, none for a run (or task instance) not ended. */
export const duration = (r: { start_date: number | null; end_date: number | null }): number | null =>
  r.start_date !== null && r.end_date !== null ? (r.end_date - r.start_date) / 1e6 : null;
/** The user a run was triggered by (`rest_api:user:<name>`), or null. */
export const user = (r: RunRow): string | null => /^(?:cli|rest_api):user:(.+)$/.exec(r.triggered_by)?.[1] ?? null;
export const runKey = (r: { dag_id: string; run_id: string }) => `${r.dag_id}/${r.run_id}`;
export const taskInstanceKey = (t: { dag_id: string; run_id: string; task_id: string }) => `${t.dag_id}/${t.run_id}/${t.task_id}`;

/** Airflow's `_pattern`: case-insensitive substring, % and _ wildcards, | for or, ~ for all. */
export function matchesPattern(pattern: string, text: string | null): boolean {
  if (pattern === "~") return true;
  if (text === null) return false;
  return pattern.split("|").some((part) => {
    const source = [...part].map((ch) => (ch === "%" ? ".*" : ch === "_" ? "." : ch.replace(/[.*+?^${}()[\]\\|]/g, "\\$&"))).join("");
    return new RegExp(source, "is").test(text);
  });
}

/** Airflow's `_prefix_pattern`: a case-sensitive literal prefix, | for or. */
export function matchesPrefix(prefix: string, text: string | null): boolean {
  return text !== null && prefix.split("|").some((p) => text.startsWith(p));
}

/** A list case: one call of a list with its parameters (a batch call's are its body's fields). */
export interface ListCase {
  name: string;
  op: "get_dag_runs" | "get_list_dag_runs_batch" | "get_task_instances" | "get_task_instances_batch" | "get_dags";
  path: { dag_id?: string; dag_run_id?: string };
  args: Record<string, unknown>;
}

export type Expected = { ids: string[]; total: number } | { status: number };

type Predicate<R> = (row: R) => boolean;
type Rule<R> = (value: unknown) => Predicate<R>;
const BOUNDS = { gte: (a: number, b: number) => a >= b, gt: (a: number, b: number) => a > b, lte: (a: number, b: number) => a <= b, lt: (a: number, b: number) => a < b };

/** The four bounds of a range on a date (ISO text) or a number, keyed `<name>_<bound>`. */
function ranges<R>(name: string, of: (r: R) => number | null, asDate: boolean): Record<string, Rule<R>> {
  return Object.fromEntries(
    Object.entries(BOUNDS).map(([bound, holds]) => [
      `${name}_${bound}`,
      (value: unknown): Predicate<R> => {
        const limit = asDate ? micro(Date.parse(String(value))) : Number(value);
        return (r) => {
          const v = of(r);
          return v !== null && holds(v, limit);
        };
      },
    ]),
  );
}

const none: Rule<unknown> = () => () => false;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const pattern = <R>(of: (r: R) => string | null): Rule<R> => (v) => (r) => matchesPattern(String(v), of(r));
const prefix = <R>(of: (r: R) => string | null): Rule<R> => (v) => (r) => matchesPrefix(String(v), of(r));
const anyOf = <R>(of: (r: R) => unknown): Rule<R> => (v) => (r) => list(v).includes(of(r));
/** A field every row has the same value of (pool, queue, map_index): a list or pattern keeps all or none. */
const constant = <R>(value: unknown, match: (given: unknown, value: unknown) => boolean): Rule<R> => (v) => () => match(v, value);
const listHolds = (given: unknown, value: unknown) => list(given).length === 0 || list(given).includes(value);

/** The runner's run types as Airflow names them. */
const airflowRunType = (t: string) => (t === "triggered" ? "operator_triggered" : t);

const RUN_SORT: Record<string, (r: RunRow) => Sortable> = {
  id: (r) => r.id, state: (r) => r.state, dag_id: (r) => r.dag_id, run_id: (r) => r.run_id, dag_run_id: (r) => r.run_id,
  logical_date: (r) => r.logical_date, partition_date: () => null, run_after: (r) => r.queued_at, queued_at: (r) => r.queued_at,
  start_date: (r) => r.start_date, end_date: (r) => r.end_date, updated_at: (r) => r.updated_at, conf: (r) => r.conf, duration,
};

const RUN_RANGES: Record<string, Rule<RunRow>> = {
  ...ranges<RunRow>("run_after", (r) => r.queued_at, true),
  ...ranges<RunRow>("logical_date", (r) => r.logical_date, true),
  ...ranges<RunRow>("start_date", (r) => r.start_date, true),
  ...ranges<RunRow>("end_date", (r) => r.end_date, true),
  ...ranges<RunRow>("duration", duration, false),
};

const RUN_RULES: Record<string, Rule<RunRow>> = {
  ...RUN_RANGES,
  ...ranges<RunRow>("updated_at", (r) => r.updated_at, true),
  partition_date_gte: none, partition_date_lte: none, bundle_version: none,
  partition_key_pattern: none, partition_key_prefix_pattern: none, consuming_asset_pattern: none,
  conf_contains: (v) => (r) => r.conf.includes(String(v)),
  run_type: anyOf((r) => airflowRunType(r.run_type)),
  state: anyOf((r) => r.state),
  dag_version: anyOf((r) => r.version_number),
  run_id_pattern: pattern((r) => r.run_id), run_id_prefix_pattern: prefix((r) => r.run_id),
  dag_id_pattern: pattern((r) => r.dag_id), dag_id_prefix_pattern: prefix((r) => r.dag_id),
  triggering_user_name_pattern: pattern(user), triggering_user_name_prefix_pattern: prefix(user),
};

const TI_SORT: Record<string, (t: TaskInstanceRow) => Sortable> = {
  id: (t) => t.id, state: (t) => t.state, duration, start_date: (t) => t.start_date, end_date: (t) => t.end_date,
  map_index: () => -1, try_number: (t) => t.try_number, logical_date: (t) => t.logical_date, run_after: (t) => t.run_after,
  data_interval_start: () => null, data_interval_end: () => null, rendered_map_index: () => null, operator: () => null,
};

const TI_RANGES: Record<string, Rule<TaskInstanceRow>> = {
  ...ranges<TaskInstanceRow>("run_after", (t) => t.run_after, true),
  ...ranges<TaskInstanceRow>("logical_date", (t) => t.logical_date, true),
  ...ranges<TaskInstanceRow>("start_date", (t) => t.start_date, true),
  ...ranges<TaskInstanceRow>("end_date", (t) => t.end_date, true),
  ...ranges<TaskInstanceRow>("duration", duration, false),
};

const TI_RULES: Record<string, Rule<TaskInstanceRow>> = {
  ...TI_RANGES,
  ...ranges<TaskInstanceRow>("updated_at", (t) => t.updated_at, true),
  task_id: (v) => (t) => t.task_id === v,
  task_display_name_pattern: pattern((t) => t.task_id), task_display_name_prefix_pattern: prefix((t) => t.task_id),
  dag_id_pattern: pattern((t) => t.dag_id), dag_id_prefix_pattern: prefix((t) => t.dag_id),
  run_id_pattern: pattern((t) => t.run_id), run_id_prefix_pattern: prefix((t) => t.run_id),
  state: anyOf((t) => t.state), version_number: anyOf((t) => t.version_number), try_number: anyOf((t) => t.try_number),
  pool: constant("default_pool", listHolds),
  pool_name_pattern: constant("default_pool", (p, v) => matchesPattern(String(p), String(v))),
  pool_name_prefix_pattern: constant("default_pool", (p, v) => matchesPrefix(String(p), String(v))),
  queue: constant("default", listHolds),
  queue_name_pattern: constant("default", (p, v) => matchesPattern(String(p), String(v))),
  queue_name_prefix_pattern: constant("default", (p, v) => matchesPrefix(String(p), String(v))),
  map_index: constant(-1, (given, v) => list(given).includes(v)),
  task_group_id: none, executor: none, operator: none, operator_name_pattern: none, operator_name_prefix_pattern: none,
  rendered_map_index_pattern: none, rendered_map_index_prefix_pattern: none,
};

/** The keys of an order_by (a list, or a batch body's comma-separated text). */
function orderKeys(value: unknown): [string, boolean][] {
  const keys = typeof value === "string" ? value.split(",").map((k) => k.trim()).filter((k) => k !== "") : (value as string[]);
  return keys.map((k) => [k.replace(/^-/, ""), k.startsWith("-")]);
}

function sortKeysOf<R>(value: unknown, table: Record<string, (r: R) => Sortable>): [(r: R) => Sortable, boolean][] {
  return orderKeys(value).map(([field, descending]) => {
    const key = table[field];
    if (!key) throw new Error(`the model has no sort key '${field}'`);
    return [key, descending];
  });
}

/** Which ids a batch body's list and the path allow together: the path's one, or the body's for `~`. */
function within(asked: unknown, path: string | undefined): string[] | null {
  const given = Array.isArray(asked) ? (asked as string[]) : null;
  if (path === undefined || path === "~") return given;
  return given === null ? [path] : given.filter((id) => id === path);
}

interface Listing<R> {
  rows: R[];
  rules: Record<string, Rule<R>>;
  sort: Record<string, (r: R) => Sortable>;
  tiebreak: (r: R) => Sortable;
  defaultOrder: (rows: R[]) => R[];
  key: (r: R) => string;
  limit: number;
}

/** Filters, sorts and pages rows as a list's query parameters (or body fields) say. */
function answer<R>(listing: Listing<R>, args: Record<string, unknown>, page: { limit: string; offset: string; order: string; ignored?: string[] }): Expected {
  let rows = listing.rows;
  for (const [name, value] of Object.entries(args)) {
    if (name === page.limit || name === page.offset || name === page.order || page.ignored?.includes(name)) continue;
    if (name === "cursor") {
      if (value !== "") return { status: 422 };
      continue;
    }
    const rule = listing.rules[name];
    if (!rule) throw new Error(`the model has no rule for the parameter '${name}'`);
    const keep = rule(value);
    rows = rows.filter(keep);
  }
  const order = args[page.order];
  const keys = order === undefined || order === null || (typeof order === "string" && order.trim() === "") ? [] : sortKeysOf(order, listing.sort);
  const ordered = keys.length === 0 ? listing.defaultOrder(rows) : sortedBy(rows, keys, listing.tiebreak);
  const limit = Number(args[page.limit] ?? listing.limit);
  const offset = Number(args[page.offset] ?? 0);
  return { ids: ordered.slice(offset, offset + limit).map(listing.key), total: ordered.length };
}

function runListing(data: RunListData, dagIds: string[] | null, limit: number, rules: Record<string, Rule<RunRow>>): Listing<RunRow> {
  return {
    rows: data.runs.filter((r) => dagIds === null || dagIds.includes(r.dag_id)),
    rules,
    sort: RUN_SORT,
    tiebreak: (r) => r.id,
    defaultOrder: (rows) => sortedBy(rows, [], (r) => r.id).reverse(), // newest first (-id)
    key: runKey,
    limit,
  };
}

function taskInstanceListing(data: RunListData, dagIds: string[] | null, runIds: string[] | null, limit: number, rules: Record<string, Rule<TaskInstanceRow>>): Listing<TaskInstanceRow> {
  return {
    rows: data.taskInstances.filter((t) => (dagIds === null || dagIds.includes(t.dag_id)) && (runIds === null || runIds.includes(t.run_id))),
    rules,
    sort: TI_SORT,
    tiebreak: (t) => t.id,
    // by run, then each run's task order
    defaultOrder: (rows) => sortedBy(rows, [[(t) => t.run_pk, false], [(t) => t.position, false], [(t) => t.task_id, false]], (t) => t.id),
    key: taskInstanceKey,
    limit,
  };
}

const nonNull = (v: unknown): unknown[] => (Array.isArray(v) ? v.filter((x) => x !== null) : []);
const BATCH_RUN_RULES: Record<string, Rule<RunRow>> = {
  ...RUN_RANGES,
  conf_contains: RUN_RULES.conf_contains as Rule<RunRow>,
  states: (v) => (r) => nonNull(v).length === 0 || nonNull(v).includes(r.state),
};
const BATCH_TI_RULES: Record<string, Rule<TaskInstanceRow>> = {
  ...TI_RANGES,
  task_ids: (v) => (t) => (v as string[]).includes(t.task_id),
  state: (v) => (t) => nonNull(v).length === 0 || nonNull(v).includes(t.state),
  pool: constant("default_pool", listHolds),
  queue: constant("default", listHolds),
  executor: (v) => () => list(v).length === 0,
};

interface DagFacts {
  dag: DagRow;
  latest: RunRow | undefined;
  runs: RunRow[];
}

const DAG_SORT: Record<string, (d: DagFacts) => Sortable> = {
  dag_id: (d) => d.dag.dag_id, dag_display_name: (d) => d.dag.dag_id, next_dagrun: () => null,
  state: (d) => d.latest?.state ?? null, last_run_state: (d) => d.latest?.state ?? null,
  start_date: (d) => d.latest?.start_date ?? null, last_run_start_date: (d) => d.latest?.start_date ?? null,
};

const isDagRunFilter = (name: string) => /^dag_run_(start_date|end_date)_(gte|gt|lte|lt)$/.test(name) || name === "dag_run_state";

/** A DAG's runs filter: a DAG with one run that every given dag_run_* bound and state holds for. */
function dagRunRules(args: Record<string, unknown>): Predicate<DagFacts> {
  const runRules: Predicate<RunRow>[] = [];
  for (const [name, value] of Object.entries(args)) {
    const m = /^dag_run_(start_date|end_date)_(gte|gt|lte|lt)$/.exec(name);
    if (m) runRules.push((RUN_RANGES[`${m[1]}_${m[2]}`] as Rule<RunRow>)(value));
    if (name === "dag_run_state") runRules.push(anyOf<RunRow>((r) => r.state)(value));
  }
  return (d) => runRules.length === 0 || d.runs.some((r) => runRules.every((keep) => keep(r)));
}

const DAG_RULES: Record<string, Rule<DagFacts>> = {
  tags: (v) => () => list(v).length === 0, owners: (v) => () => list(v).length === 0, tags_match_mode: () => () => true,
  dag_id_pattern: pattern((d) => d.dag.dag_id), dag_id_prefix_pattern: prefix((d) => d.dag.dag_id),
  dag_display_name_pattern: pattern((d) => d.dag.dag_id), dag_display_name_prefix_pattern: prefix((d) => d.dag.dag_id),
  exclude_stale: (v) => (d) => v === false || !d.dag.is_stale,
  paused: (v) => (d) => d.dag.is_paused === v,
  has_import_errors: (v) => (d) => d.dag.has_import_errors === v,
  last_dag_run_state: (v) => (d) => d.latest?.state === v,
  bundle_name: (v) => (d) => d.dag.bundle_name === v,
  bundle_version: none, asset_dependency: none,
  has_asset_schedule: (v) => () => v !== true,
  // no DAG of the run list is anyone's favourite
  is_favorite: (v) => () => v !== true,
  timetable_type: anyOf((d) => TIMETABLES[d.dag.dag_id]),
};

function dagsAnswer(data: RunListData, args: Record<string, unknown>): Expected {
  const facts: DagFacts[] = data.dags.map((dag) => {
    const runs = data.runs.filter((r) => r.dag_id === dag.dag_id);
    const latest = sortedBy(runs, [[(r) => r.queued_at, true]], (r) => r.id)[0];
    return { dag, latest, runs };
  });
  const withRuns = dagRunRules(args);
  const rest = Object.fromEntries(Object.entries(args).filter(([k]) => !isDagRunFilter(k)));
  if (!("exclude_stale" in rest)) rest.exclude_stale = true;
  return answer<DagFacts>(
    {
      rows: facts.filter(withRuns),
      rules: DAG_RULES,
      sort: DAG_SORT,
      tiebreak: (d) => d.dag.dag_id,
      defaultOrder: (rows) => sortedBy(rows, [], (d) => d.dag.dag_id),
      key: (d) => d.dag.dag_id,
      limit: 100,
    },
    rest,
    { limit: "limit", offset: "offset", order: "order_by" },
  );
}

/** What the runner must answer for a case, from the rows. */
export function expectedAnswer(data: RunListData, c: ListCase): Expected {
  const dagIds = (id: string | undefined) => (id === undefined || id === "~" ? null : [id]);
  const get = { limit: "limit", offset: "offset", order: "order_by" };
  const batch = { limit: "page_limit", offset: "page_offset", order: "order_by" };
  switch (c.op) {
    case "get_dag_runs":
      return answer(runListing(data, dagIds(c.path.dag_id), 100, RUN_RULES), c.args, get);
    case "get_list_dag_runs_batch":
      return answer(runListing(data, within(c.args.dag_ids, c.path.dag_id), 100, BATCH_RUN_RULES), c.args, { ...batch, ignored: ["dag_ids"] });
    case "get_task_instances":
      return answer(taskInstanceListing(data, dagIds(c.path.dag_id), dagIds(c.path.dag_run_id), 1000, TI_RULES), c.args, get);
    case "get_task_instances_batch":
      return answer(
        taskInstanceListing(data, within(c.args.dag_ids, c.path.dag_id), within(c.args.dag_run_ids, c.path.dag_run_id), 100, BATCH_TI_RULES),
        c.args,
        { ...batch, ignored: ["dag_ids", "dag_run_ids"] },
      );
    case "get_dags":
      return dagsAnswer(data, c.args);
  }
}
