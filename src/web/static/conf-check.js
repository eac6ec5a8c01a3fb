// The conf editor's check in the page: conf parsed as JSON and checked against the DAG's params
// JSON Schema (the subset zod's toJSONSchema produces: types, required and unknown properties,
// enums and consts, bounds, lengths, patterns, items, anyOf/oneOf/allOf). The server checks again
// with the engine's own validation, so an unsupported keyword only means a later error message.

function jsonType(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeMatches(expected, value) {
  const actual = jsonType(value);
  return expected === actual || (expected === "number" && actual === "integer");
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function checkScalar(schema, value, path) {
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) return `${path}: must be at least ${schema.minimum}`;
    if (typeof schema.maximum === "number" && value > schema.maximum) return `${path}: must be at most ${schema.maximum}`;
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) return `${path}: must be more than ${schema.exclusiveMinimum}`;
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) return `${path}: must be less than ${schema.exclusiveMaximum}`;
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && [...value].length < schema.minLength) return `${path}: must have at least ${schema.minLength} characters`;
    if (typeof schema.maxLength === "number" && [...value].length > schema.maxLength) return `${path}: must have at most ${schema.maxLength} characters`;
    if (typeof schema.pattern === "string") {
      try {
        if (!new RegExp(schema.pattern, "u").test(value)) return `${path}: must match ${schema.pattern}`;
      } catch {
        // a pattern this browser cannot compile: the server decides
      }
    }
  }
  return null;
}

function checkContainer(schema, value, path) {
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) return `${path}: must have at least ${schema.minItems} items`;
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) return `${path}: must have at most ${schema.maxItems} items`;
    for (let i = 0; i < value.length && schema.items && typeof schema.items === "object"; i++) {
      const problem = validateAgainstSchema(schema.items, value[i], `${path}.${i}`);
      if (problem) return problem;
    }
  } else if (jsonType(value) === "object") {
    for (const name of Array.isArray(schema.required) ? schema.required : []) {
      if (!(name in value)) return `${path}.${name}: is required`;
    }
    const properties = schema.properties && typeof schema.properties === "object" ? schema.properties : {};
    for (const [name, inner] of Object.entries(value)) {
      const spec = Object.hasOwn(properties, name) ? properties[name] : schema.additionalProperties;
      if (spec === false) return `${path}.${name}: is not a param of this DAG`;
      const problem = spec && typeof spec === "object" ? validateAgainstSchema(spec, inner, `${path}.${name}`) : null;
      if (problem) return problem;
    }
  }
  return null;
}

/** The first problem found, as "conf.field: message", or null. */
function validateAgainstSchema(schema, value, path) {
  if (schema === false) return `${path}: is not allowed`;
  if (!schema || typeof schema !== "object") return null;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    const problems = alternatives.map((alt) => validateAgainstSchema(alt, value, path));
    if (!problems.includes(null)) return problems[0] ?? `${path}: matches none of the allowed shapes`;
  }
  for (const part of Array.isArray(schema.allOf) ? schema.allOf : []) {
    const problem = validateAgainstSchema(part, value, path);
    if (problem) return problem;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value))) return `${path}: expected ${types.join(" or ")}, got ${jsonType(value)}`;
  }
  if ("const" in schema && !same(schema.const, value)) return `${path}: must be ${JSON.stringify(schema.const)}`;
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => same(option, value))) {
    return `${path}: must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(", ")}`;
  }
  return checkScalar(schema, value, path) ?? checkContainer(schema, value, path);
}

/** Parses the editor's text; returns { conf } or { problem }. */
export function readConf(text, schema) {
  let conf;
  try {
    conf = JSON.parse(text.trim() === "" ? "{}" : text);
  } catch (err) {
    return { problem: `conf: not valid JSON (${err.message})` };
  }
  if (jsonType(conf) !== "object") return { problem: `conf: must be a JSON object, got ${jsonType(conf)}` };
  const problem = validateAgainstSchema(schema, conf, "conf");
  return problem ? { problem } : { conf };
}

