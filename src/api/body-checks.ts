// Checks on a parsed JSON body before schema validation: what Postgres cannot store (NUL, lone
// UTF-16 surrogates in text and jsonb) and nesting deep enough to exhaust a recursive validator
// are the caller's problem (422 naming the field), not an internal error.
import { ApiProblem } from "./problem.ts";

export const MAX_JSON_DEPTH = 64;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "contains a NUL character (\\u0000), which cannot be stored";
  if (LONE_SURROGATE.test(text)) return "contains an unpaired UTF-16 surrogate, which is not valid Unicode";
  return undefined;
}

function fieldPath(path: string[]): string {
  return path.length === 0 ? "body" : path.join(".");
}

/** Throws ApiProblem(422) naming the first unstorable string or the point nesting goes too deep. */
export function assertStorableJson(value: unknown, path: string[] = []): void {
  if (path.length > MAX_JSON_DEPTH) {
    throw new ApiProblem(422, `${fieldPath(path.slice(0, 3))}...: JSON is nested deeper than ${MAX_JSON_DEPTH} levels`, {
      field: fieldPath(path.slice(0, 3)),
    });
  }
  if (typeof value === "string") {
    const problem = stringProblem(value);
    if (problem) throw new ApiProblem(422, `${fieldPath(path)}: ${problem}`, { field: fieldPath(path) });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => assertStorableJson(item, [...path, String(index)]));
    return;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      const problem = stringProblem(key);
      if (problem) throw new ApiProblem(422, `${fieldPath(path)}: a key ${problem}`, { field: fieldPath(path) });
      assertStorableJson(inner, [...path, key]);
    }
  }
}
