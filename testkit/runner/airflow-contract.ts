// Airflow's own OpenAPI document (vendor/airflow/, apache-airflow-core 3.3.2) as a response validator:
// every answer of the API tests (harness.call) is checked against the schema Airflow declares for
// that operation and status, with Ajv (JSON Schema 2020-12, formats checked). Routes Airflow does not
// have (the runner's extensions) are not checked; the ones it has are recorded, so the contract test
// can prove each was seen answering.
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { parse as parseYaml } from "yaml";
import { repoRoot } from "../../src/config/index.ts";

type Json = Record<string, unknown>;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}

export interface AirflowDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json> };
}

function loadDocument(file: string): AirflowDocument {
  return parseYaml(readFileSync(path.join(repoRoot, "vendor/airflow", file), "utf8")) as AirflowDocument;
}

export const airflowRestApi = withoutKnownFlaws(loadDocument("v2-rest-api-generated.yaml"));
export const airflowSimpleAuth = loadDocument("v2-simple-auth-manager-generated.yaml");

/** Airflow's document declares a clear's dry-run items as oneOf TaskInstanceResponse and
 * NewTaskResponse, and every TaskInstanceResponse also matches NewTaskResponse (two required fields,
 * extra ones allowed): under oneOf no answer Airflow itself gives would pass (and the official client
 * raises "Multiple matches" on it; docs/api.md says so). Checked as anyOf: either shape passes. */
function withoutKnownFlaws(doc: AirflowDocument): AirflowDocument {
  const items = (doc.components.schemas.ClearTaskInstanceCollectionResponse?.properties as Json | undefined)?.task_instances as { items?: Json } | undefined;
  if (items?.items && Array.isArray(items.items.oneOf)) {
    items.items.anyOf = items.items.oneOf;
    delete items.items.oneOf;
  }
  return doc;
}

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema(airflowRestApi, "airflow-rest");
ajv.addSchema(airflowSimpleAuth, "airflow-auth");

/** /api/v2/dags/{dag_id} -> ^/api/v2/dags/[^/]+$ */
function templateRegex(template: string): RegExp {
  const segments = template.split("/").map((segment) => (/^\{[A-Za-z_]+\}$/.test(segment) ? "[^/]+" : segment.replace(/[.*+?^$()|[\]\\]/g, "\\$&")));
  return new RegExp(`^${segments.join("/")}$`);
}

interface Template {
  doc: "airflow-rest" | "airflow-auth";
  path: string;
  regex: RegExp;
  literals: number;
}

const templates: Template[] = (
  [
    ["airflow-rest", airflowRestApi],
    ["airflow-auth", airflowSimpleAuth],
  ] as const
)
  .flatMap(([doc, document]) =>
    Object.keys(document.paths).map((p) => ({
      doc,
      path: p,
      regex: templateRegex(p),
      literals: p.split("/").filter((segment) => segment !== "" && !segment.startsWith("{")).length,
    })),
  )
  .sort((a, b) => b.literals - a.literals);

/** The Airflow path template a concrete path answers to (the most literal one), if any. */
export function airflowTemplate(method: string, concretePath: string): Template | undefined {
  const pathOnly = concretePath.split("?")[0] ?? concretePath;
  return templates.find((t) => {
    const document = t.doc === "airflow-rest" ? airflowRestApi : airflowSimpleAuth;
    return t.regex.test(pathOnly) && document.paths[t.path]?.[method.toLowerCase()] !== undefined;
  });
}

const validators = new Map<string, ValidateFunction>();
function validatorFor(ref: string): ValidateFunction {
  let validate = validators.get(ref);
  if (!validate) {
    const compiled = ajv.getSchema(ref);
    if (!compiled) throw new Error(`no schema ${ref} in the vendored Airflow documents`);
    validate = compiled;
    validators.set(ref, validate);
  }
  return validate;
}

/** Every (method template status) validated, for the contract test's coverage check. */
export const validatedAnswers = new Set<string>();

export interface AirflowCheck {
  /** Null when the route is not Airflow's (a runner extension): nothing to check. */
  operation: string | null;
  errors: string[];
}

function jsonPointer(schema: Json | undefined, doc: string, template: string, method: string, status: string, type: string): string {
  const ref = typeof schema?.$ref === "string" ? schema.$ref : undefined;
  if (ref) return `${doc}${ref}`;
  const escaped = template.replace(/~/g, "~0").replace(/\//g, "~1");
  return `${doc}#/paths/${escaped}/${method}/responses/${status}/content/${type.replace(/\//g, "~1")}/schema`;
}

/** Checks one answer against Airflow's document: the schema of that operation and status (an error
 * status Airflow does not list is checked against its generic HTTPExceptionResponse). */
export function checkAgainstAirflow(method: string, concretePath: string, status: number, contentType: string, body: unknown): AirflowCheck {
  const template = airflowTemplate(method, concretePath);
  if (!template) return { operation: null, errors: [] };
  const m = method.toLowerCase();
  const document = template.doc === "airflow-rest" ? airflowRestApi : airflowSimpleAuth;
  const operation = document.paths[template.path]?.[m];
  const name = `${method.toUpperCase()} ${template.path} ${status}`;
  if (!operation) return { operation: null, errors: [] };
  if (status === 204 || (status >= 300 && status < 400)) {
    validatedAnswers.add(name);
    return { operation: name, errors: [] };
  }
  const declared = operation.responses[String(status)];
  const isJson = /^application\/([\w.+-]+\+)?json/.test(contentType);
  const media = isJson ? "application/json" : contentType.split(";")[0]?.trim() ?? "";
  let ref: string;
  if (declared?.content?.[media]) {
    ref = jsonPointer(declared.content[media].schema, template.doc, template.path, m, String(status), media);
  } else if (status >= 400 && isJson) {
    ref = `${template.doc}#/components/schemas/HTTPExceptionResponse`;
  } else if (status < 300 && !isJson) {
    // a content type Airflow does not declare for this operation (an extension, e.g. text/plain logs)
    return { operation: null, errors: [] };
  } else {
    return { operation: name, errors: [`Airflow declares no ${media} answer with status ${status} for ${method} ${template.path}`] };
  }
  const validate = validatorFor(ref);
  if (validate(body)) {
    validatedAnswers.add(name);
    return { operation: name, errors: [] };
  }
  const errors = (validate.errors ?? []).map((e) => `${e.instancePath || "(body)"} ${e.message ?? "is invalid"} ${JSON.stringify(e.params)}`);
  return { operation: name, errors };
}
