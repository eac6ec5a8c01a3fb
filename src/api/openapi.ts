// Writes the OpenAPI 3.1 document from the route declarations and their zod schemas, so every
// mounted route is described and the schemas are the ones that validate requests.
import { z } from "zod";
import type { RouteSpec } from "./route.ts";
import { problemResponse } from "./schemas.ts";

type JsonSchema = Record<string, unknown>;

function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

function parametersOf(schema: z.ZodType | undefined, location: "path" | "query"): JsonSchema[] {
  if (!schema) return [];
  const json = jsonSchemaOf(schema, "input");
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: location,
      required: location === "path" || required.has(name),
      ...(typeof description === "string" ? { description } : {}),
      schema: propertySchema,
    };
  });
}

const problemRef = { $ref: "#/components/schemas/ProblemResponse" };
const problemContent = { "application/problem+json": { schema: problemRef } };

function responsesOf(spec: RouteSpec, components: Record<string, JsonSchema>): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(spec.responses)) {
    if (doc.schema && doc.schemaName) {
      components[doc.schemaName] ??= jsonSchemaOf(doc.schema, "output");
      const content: Record<string, unknown> = { "application/json": { schema: { $ref: `#/components/schemas/${doc.schemaName}` } } };
      if (spec.operationId === "get_log") {
        content["application/x-ndjson"] = { schema: { type: "string" } };
        content["text/plain"] = { schema: { type: "string" } };
      }
      if (spec.operationId === "get_dag_source") content["text/plain"] = { schema: { type: "string" } };
      responses[status] = { description: doc.description, content };
    } else if (doc.contentType) {
      responses[status] = { description: doc.description, content: { [doc.contentType]: { schema: {} } } };
    } else if (Number(status) >= 400) {
      responses[status] = { description: doc.description, content: problemContent };
    } else {
      responses[status] = { description: doc.description };
    }
  }
  const standard: [boolean, string, string][] = [
    [spec.params !== undefined, "400", "Malformed path parameter or JSON body"],
    [spec.auth, "401", "No bearer token"],
    [spec.auth, "403", "Wrong bearer token"],
    [true, "405", "Method not allowed on this path"],
    [spec.body !== undefined, "413", "Body larger than the limit"],
    [spec.body !== undefined, "415", "Body is not JSON"],
    [spec.query !== undefined || spec.body !== undefined, "422", "A field or query parameter is invalid or unknown"],
  ];
  for (const [applies, status, description] of standard) {
    if (applies && !responses[status]) responses[status] = { description, content: problemContent };
  }
  responses["500"] ??= { description: "Internal fault; the body names a request id to find in the log", content: problemContent };
  return responses;
}

export function buildOpenApiDocument(specs: RouteSpec[], info: { version: string }): Record<string, unknown> {
  const components: Record<string, JsonSchema> = { ProblemResponse: jsonSchemaOf(problemResponse, "output") };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const operation: Record<string, unknown> = {
      operationId: spec.operationId,
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      tags: [spec.tag],
      security: spec.auth ? [{ bearerAuth: [] }] : [],
      parameters: [...parametersOf(spec.params, "path"), ...parametersOf(spec.query, "query")],
      responses: responsesOf(spec, components),
    };
    if (spec.body) {
      const name = spec.bodySchemaName ?? `${spec.operationId}_body`;
      components[name] ??= jsonSchemaOf(spec.body, "input");
      operation.requestBody = {
        required: true,
        content: {
          "application/json": { schema: { $ref: `#/components/schemas/${name}` } },
          ...(spec.formBody ? { "application/x-www-form-urlencoded": { schema: { $ref: `#/components/schemas/${name}` } } } : {}),
        },
      };
    }
    paths[spec.path] = { ...paths[spec.path], [spec.method]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Clickstream stand DAG runner API",
      version: info.version,
      description:
        "The shape of Airflow's public REST API v2 for the stand's DAG runner. Mutating calls (POST, PUT, PATCH, " +
        "DELETE) need 'Authorization: Bearer <runner.api_token>'. Errors are problem JSON naming the field.",
    },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: components,
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", description: "runner.api_token from stand.yaml" } },
    },
  };
}
