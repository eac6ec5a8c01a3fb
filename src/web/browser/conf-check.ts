// The conf editor's check in the page: conf parsed as JSON and checked against the DAG's params
// JSON Schema (the subset zod's toJSONSchema produces: types, required and unknown properties,
// enums and consts, bounds, lengths, patterns, items, anyOf/oneOf/allOf). The server checks again
// with the engine's own validation, so an unsupported keyword only means a later error message.

/** A schema object (or any JSON object or array read as one: unknown keywords read as undefined). */
type SchemaObject = { readonly [keyword: string]: unknown };
export type JsonObject = { [key: string]: unknown };

function isObjectLike(value: unknown): value is SchemaObject {
  return typeof value === "object" && value !== null;
}

function isList(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}

function isJsonObject(value: unknown): value is JsonObject {
  return isObjectLike(value) && !Array.isArray(value);
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeMatches(expected: unknown, value: unknown): boolean {
  const actual = jsonType(value);
  return expected === actual || (expected === "number" && actual === "integer");
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function checkScalar(schema: SchemaObject, value: unknown, path: string): string | null {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern } = schema;
  if (typeof value === "number") {
    if (typeof minimum === "number" && value < minimum) return `${path}: must be at least ${minimum}`;
    if (typeof maximum === "number" && value > maximum) return `${path}: must be at most ${maximum}`;
    if (typeof exclusiveMinimum === "number" && value <= exclusiveMinimum) return `${path}: must be more than ${exclusiveMinimum}`;
    if (typeof exclusiveMaximum === "number" && value >= exclusiveMaximum) return `${path}: must be less than ${exclusiveMaximum}`;
  }
  if (typeof value === "string") {
    if (typeof minLength === "number" && [...value].length < minLength) return `${path}: must have at least ${minLength} characters`;
    if (typeof maxLength === "number" && [...value].length > maxLength) return `${path}: must have at most ${maxLength} characters`;
    if (typeof pattern === "string") {
      try {
        if (!new RegExp(pattern, "u").test(value)) return `${path}: must match ${pattern}`;
      } catch {
        // a pattern this browser cannot compile: the server decides
      }
    }
  }
  return null;
}

function checkContainer(schema: SchemaObject, value: unknown, path: string): string | null {
  if (isList(value)) {
    const { minItems, maxItems, items } = schema;
    if (typeof minItems === "number" && value.length < minItems) return `${path}: must have at least ${minItems} items`;
    if (typeof maxItems === "number" && value.length > maxItems) return `${path}: must have at most ${maxItems} items`;
    if (!isObjectLike(items)) return null;
    for (const [i, item] of value.entries()) {
      const problem = validateAgainstSchema(items, item, `${path}.${i}`);
      if (problem) return problem;
    }
  } else if (isJsonObject(value)) {
    for (const name of isList(schema.required) ? schema.required : []) {
      // Own properties only: "toString" in {} is true, but a conf without it has no such param.
      if (typeof name === "string" && !Object.hasOwn(value, name)) return `${path}.${name}: is required`;
    }
    const properties = isObjectLike(schema.properties) ? schema.properties : {};
    for (const [name, inner] of Object.entries(value)) {
      const spec = Object.hasOwn(properties, name) ? properties[name] : schema.additionalProperties;
      if (spec === false) return `${path}.${name}: is not a param of this DAG`;
      const problem = isObjectLike(spec) ? validateAgainstSchema(spec, inner, `${path}.${name}`) : null;
      if (problem) return problem;
    }
  }
  return null;
}

/** The first problem found, as "conf.field: message", or null. */
function validateAgainstSchema(schema: unknown, value: unknown, path: string): string | null {
  if (schema === false) return `${path}: is not allowed`;
  if (!isObjectLike(schema)) return null;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (isList(alternatives)) {
    const problems = alternatives.map((alt) => validateAgainstSchema(alt, value, path));
    if (!problems.includes(null)) return problems[0] ?? `${path}: matches none of the allowed shapes`;
  }
  for (const part of isList(schema.allOf) ? schema.allOf : []) {
    const problem = validateAgainstSchema(part, value, path);
    if (problem) return problem;
  }
  if (schema.type !== undefined) {
    const types = isList(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value))) return `${path}: expected ${types.join(" or ")}, got ${jsonType(value)}`;
  }
  if ("const" in schema && !same(schema.const, value)) return `${path}: must be ${JSON.stringify(schema.const)}`;
  if (isList(schema.enum) && !schema.enum.some((option) => same(option, value))) {
    return `${path}: must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(", ")}`;
  }
  return checkScalar(schema, value, path) ?? checkContainer(schema, value, path);
}

export type ConfReading = { conf: JsonObject; problem?: undefined } | { conf?: undefined; problem: string };

/** Parses the editor's text; returns { conf } or { problem }. */
export function readConf(text: string, schema: unknown): ConfReading {
  let conf: unknown;
  try {
    conf = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (err) {
    return { problem: `conf: not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (!isJsonObject(conf)) return { problem: `conf: must be a JSON object, got ${jsonType(conf)}` };
  const problem = validateAgainstSchema(schema, conf, "conf");
  return problem ? { problem } : { conf };
}
