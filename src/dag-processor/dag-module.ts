// What a DAG file must give: a default export that is a built DAG, or an array of them. Shared by
// the isolated parse (parse-worker.ts) and the runner's own import of a version (versions.ts).
import { Dag } from "../runner/index.ts";
import { coerceError } from "../errors.ts";
import { repoRoot } from "../config/index.ts";

export function dagsOfModule(module: unknown, fileloc: string): Dag[] {
  const exported = (module as { default?: unknown } | null)?.default;
  const dags: unknown[] = Array.isArray(exported) ? exported : [exported];
  const built = dags.filter((d) => d instanceof Dag);
  if (built.length === 0 || built.length !== dags.length) {
    throw new TypeError(`${fileloc} does not default-export a built DAG (defineDag(...).build(), or an array of them)`);
  }
  return built;
}

/** A thrown value's stack with paths relative to the repository, as an import error shows it. */
export function stackOf(err: unknown): string {
  const error = coerceError(err);
  const stack = error.stack ?? `${error.name}: ${error.message}`;
  return stack.split(`file://${repoRoot}/`).join("").split(`${repoRoot}/`).join("");
}
