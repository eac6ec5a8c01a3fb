// Request metrics of the API itself, registered once per registry next to the engine's metrics.
import type { RequestHandler } from "express";
import { Counter, Histogram, type Registry } from "prom-client";

const REQUESTS = "runner_api_requests_total";
const DURATION = "runner_api_request_duration_seconds";
const labelNames = ["method", "route", "status"] as const;

function requestMetrics(registry: Registry): { requests: Counter<(typeof labelNames)[number]>; duration: Histogram<(typeof labelNames)[number]> } {
  const requests =
    (registry.getSingleMetric(REQUESTS) as Counter<(typeof labelNames)[number]> | undefined) ??
    new Counter({ name: REQUESTS, help: "API requests answered, by route template and status", labelNames, registers: [registry] });
  const duration =
    (registry.getSingleMetric(DURATION) as Histogram<(typeof labelNames)[number]> | undefined) ??
    new Histogram({
      name: DURATION,
      help: "API request duration in seconds, by route template and status",
      labelNames,
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
      registers: [registry],
    });
  return { requests, duration };
}

/** Counts every answer by its route template (never the raw path, which would explode labels). */
export function recordRequestMetrics(registry: Registry): RequestHandler {
  const { requests, duration } = requestMetrics(registry);
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const routePath = (req.route as { path?: unknown } | undefined)?.path;
      const labels = {
        method: req.method,
        route: typeof routePath === "string" ? routePath : "unmatched",
        status: String(res.statusCode),
      };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}
