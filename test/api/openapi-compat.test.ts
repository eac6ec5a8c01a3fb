// Our /api/v2/openapi.json stays generated from the route declarations; this proves it is a valid
// OpenAPI 3.1 document and, for every route we serve that Airflow has, compatible with Airflow's:
// the same path parameters and success status, every response field Airflow requires present and
// required with a type Airflow allows (null only where it does), and every field of Airflow's request
// body accepted (so a body an Airflow client builds is never refused as unknown), none required that
// Airflow leaves optional.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { buildOpenApiDocument } from "../../src/api/openapi.ts";
import type { RunnerService } from "../../src/runner/service.ts";
import { API_VERSION } from "../../src/api/version.ts";
import { airflowRestApi, airflowSimpleAuth, type AirflowDocument } from "../../testkit/runner/airflow-contract.ts";

type Schema = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
}

// the routes are declared without touching the engine: a stub is enough to write the document
const app = createApp({ runner: {} as RunnerService, token: "compat-test-token", logger: pino({ level: "silent" }) });
const ours = buildOpenApiDocument([...app.routeSpecs], { version: API_VERSION }) as unknown as Doc;

function deref(schema: Schema | undefined, doc: Doc | AirflowDocument): Schema {
  let current = schema ?? {};
  for (let i = 0; i < 10 && typeof current.$ref === "string"; i++) {
    const name = current.$ref.replace("#/components/schemas/", "");
    current = (doc.components.schemas[name]) ?? {};
  }
  return current;
}

function branches(schema: Schema, doc: Doc | AirflowDocument): Schema[] {
  const s = deref(schema, doc);
  const alternatives = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alternatives) return alternatives.flatMap((a) => branches(a, doc));
  if (Array.isArray(s.type)) return (s.type as string[]).map((t) => ({ ...s, type: t }));
  return [s];
}

const unconstrained = (s: Schema) => s.type === undefined && s.enum === undefined && s.const === undefined && s.properties === undefined && s.not === undefined;

/** Problems where a value valid for `mine` could be invalid for `theirs` (checked where Airflow constrains). */
function fits(mine: Schema, theirs: Schema, at: string, depth = 0): string[] {
  const theirBranches = branches(theirs, airflowRestApi);
  if (theirBranches.some(unconstrained) || depth > 6) return [];
  return branches(mine, ours).flatMap((m) => {
    if (m.not !== undefined && Object.keys(m.not as object).length === 0) return []; // never: no value at all
    const values = m.const !== undefined ? [m.const] : (m.enum as unknown[] | undefined);
    const fitting = theirBranches.find((t) => {
      if (values && (t.enum || t.const !== undefined)) return values.every((v) => ((t.enum as unknown[] | undefined) ?? [t.const]).includes(v));
      const type = m.type ?? (values ? (values[0] === null ? "null" : typeof values[0]) : undefined);
      return type === t.type || (type === "integer" && t.type === "number");
    });
    if (!fitting) return [`${at}: ${JSON.stringify(m).slice(0, 120)} is not allowed by Airflow's ${JSON.stringify(theirBranches).slice(0, 160)}`];
    if (m.type === "object" && fitting.properties) {
      const mineProps = (m.properties ?? {}) as Record<string, Schema>;
      const mineRequired = new Set((m.required ?? []) as string[]);
      return ((fitting.required ?? []) as string[]).flatMap((name) => {
        const prop = mineProps[name];
        if (!prop || !mineRequired.has(name)) return [`${at}.${name}: required by Airflow, not required here`];
        return fits(prop, (fitting.properties as Record<string, Schema>)[name] ?? {}, `${at}.${name}`, depth + 1);
      });
    }
    if (m.type === "array" && m.items && fitting.items) return fits(m.items as Schema, fitting.items as Schema, `${at}[]`, depth + 1);
    return [];
  });
}

function airflowOperation(method: string, path: string): { doc: AirflowDocument; op: Doc["paths"][string][string] } | undefined {
  for (const doc of [airflowRestApi, airflowSimpleAuth]) {
    const op = (doc).paths[path]?.[method];
    if (op) return { doc, op };
  }
  return undefined;
}

void describe("our OpenAPI document", () => {
  void it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(ours as unknown as Parameters<Validator["validate"]>[0]);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
  });

  void it("is compatible with Airflow's for every route we serve that Airflow has", () => {
    const problems: string[] = [];
    let compared = 0;
    for (const [path, ops] of Object.entries(ours.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const theirs = airflowOperation(method, path);
        if (!theirs) continue;
        if ((op as { tags?: string[] }).tags?.includes("Not served")) {
          // a concept this runner does not have: any call is 501, so only that answer is checked
          if (!op.responses["501"] || Object.keys(op.responses).some((s) => s.startsWith("2"))) problems.push(`${method.toUpperCase()} ${path}: not served, yet not a bare 501`);
          continue;
        }
        compared += 1;
        const where = `${method.toUpperCase()} ${path}`;
        const pathParams = (o: typeof op) => (o.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name).sort();
        if (JSON.stringify(pathParams(op)) !== JSON.stringify(pathParams(theirs.op))) problems.push(`${where}: path parameters differ`);
        const success = Object.keys(op.responses).filter((s) => s.startsWith("2"));
        for (const status of success) {
          const theirResponse = theirs.op.responses[status];
          if (!theirResponse) {
            problems.push(`${where}: answers ${status}, Airflow ${Object.keys(theirs.op.responses).join("/")}`);
            continue;
          }
          const mine = op.responses[status]?.content?.["application/json"]?.schema;
          const their = theirResponse.content?.["application/json"]?.schema;
          if (mine && their) {
            problems.push(...fits(deref(mine, ours), deref(their, theirs.doc), `${where} ${status}`));
          }
        }
        const theirBody = theirs.op.requestBody?.content["application/json"]?.schema;
        const myBody = op.requestBody?.content["application/json"]?.schema;
        if (theirBody && myBody) {
          const t = deref(theirBody, theirs.doc);
          const m = deref(myBody, ours);
          const mineProps = Object.keys((m.properties ?? {}));
          for (const name of Object.keys((t.properties ?? {}))) {
            if (!mineProps.includes(name)) problems.push(`${where} body: Airflow's field ${name} is refused here`);
          }
          for (const name of (m.required ?? []) as string[]) {
            if (!((t.required ?? []) as string[]).includes(name)) problems.push(`${where} body: ${name} is required here, optional in Airflow`);
          }
        } else if (theirBody && !myBody) {
          problems.push(`${where}: Airflow sends a body we do not read`);
        }
      }
    }
    assert.ok(compared >= 24, `only ${compared} routes compared`);
    assert.deepEqual(problems, []);
  });
});
