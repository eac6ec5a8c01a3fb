// Health (Airflow's shape), Prometheus metrics, and the OpenAPI document of this API.
import type { ApiContext } from "../context.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { healthResponse } from "../schemas.ts";

export function monitorRoutes({ runner, metricsRegistry }: ApiContext, openApiDocument: () => unknown): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/monitor/health",
      operationId: "get_health",
      summary: "Health of the metadatabase and the scheduler",
      description: "Always 200 when the API answers (as in Airflow); read the statuses.",
      tag: "Monitor",
      auth: false,
      responses: { 200: { description: "Component statuses", schema: healthResponse, schemaName: "HealthInfoResponse" } },
      async handle({ res }) {
        const health = await runner.health();
        const heartbeat = health.latestHeartbeat ? health.latestHeartbeat.toISOString() : null;
        res.json({
          metadatabase: { status: health.metadatabase, ...(health.metadatabaseDetail === undefined ? {} : { detail: health.metadatabaseDetail }) },
          scheduler: { status: health.scheduler, latest_scheduler_heartbeat: heartbeat },
          // waiting triggers resume inside the engine's workers: the scheduler's heartbeat is theirs
          triggerer: { status: health.scheduler, latest_triggerer_heartbeat: heartbeat },
          dag_processor: null,
        });
      },
    }),
    defineRoute({
      method: "get",
      path: "/metrics",
      operationId: "get_metrics",
      summary: "Prometheus metrics of the engine and the API",
      tag: "Monitor",
      auth: false,
      responses: { 200: { description: "Prometheus text exposition format", contentType: "text/plain; version=0.0.4" } },
      async handle({ res }) {
        const text = await metricsRegistry.metrics();
        res.type(metricsRegistry.contentType).send(text);
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/openapi.json",
      operationId: "get_openapi",
      summary: "This document",
      tag: "Monitor",
      auth: false,
      responses: { 200: { description: "OpenAPI 3.1 document", contentType: "application/json" } },
      handle({ res }) {
        res.json(openApiDocument());
      },
    }),
  ];
}
