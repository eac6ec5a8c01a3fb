// The last hour of the loader's consumer lag and rows placed, per minute, read from the stand's
// Prometheus (src/addons/prometheus.ts) for the World page: Prometheus keeps the history, the page
// only asks it (GET /api/v1/query_range), and links to it for anything else.
import { z } from "zod";
import type { StandConfig } from "../config/index.ts";

export interface MetricsHistoryView {
  /** Where a browser on this machine reaches Prometheus (its own UI, alerts, graphs). */
  prometheusUrl: string;
  /** "HH:MM" (UTC) of each minute, oldest first. */
  minutes: string[];
  /** The world's consumer lag (sum over partitions) at the end of each minute; null: no sample. */
  lag: (number | null)[];
  /** Rows the loader placed during each minute; null: no sample. */
  placed: (number | null)[];
}

const MINUTES = 60;

const rangeAnswer = z.object({
  status: z.literal("success"),
  data: z.object({ result: z.array(z.object({ values: z.array(z.tuple([z.number(), z.string()])) })) }),
});

/** Where the runner reaches Prometheus (its host in a compose network) and where a browser does. */
export function prometheusAddresses(config: StandConfig): { api: string; browser: string } | undefined {
  const p = config.prometheus;
  if (!p) return undefined;
  return { api: `http://${p.host ?? config.bind_host}:${p.port}`, browser: `http://${config.bind_host}:${p.port}` };
}

async function range(api: string, query: string, start: number, end: number, signal: AbortSignal): Promise<Map<number, number>> {
  const url = `${api}/api/v1/query_range?${new URLSearchParams({ query, start: String(start), end: String(end), step: "60" }).toString()}`;
  const response = await fetch(url, { signal });
  if (!response.ok) throw new Error(`Prometheus answered HTTP ${response.status} to ${query}`);
  const parsed = rangeAnswer.safeParse(await response.json());
  if (!parsed.success) throw new Error(`Prometheus's answer to ${query} is not a range result: ${parsed.error.issues[0]?.message ?? ""}`);
  const values = new Map<number, number>();
  for (const [at, value] of parsed.data.data.result[0]?.values ?? []) values.set(at, Number(value));
  return values;
}

/** The last hour from Prometheus; throws (the page shows why) when it is not configured or does not answer. */
export async function readMetricsHistory(config: StandConfig, now = Date.now(), timeoutMs = 4000): Promise<MetricsHistoryView> {
  const where = prometheusAddresses(config);
  if (!where) throw new Error("no prometheus in the stand config: this stand keeps no metrics history");
  const end = Math.floor(now / 60_000) * 60;
  const start = end - (MINUTES - 1) * 60;
  const signal = AbortSignal.timeout(timeoutMs);
  const [lag, placed] = await Promise.all([
    range(where.api, 'sum(loader_consumer_lag{topic="hits"})', start, end, signal),
    range(where.api, "sum(increase(loader_rows_placed_total[1m]))", start, end, signal),
  ]);
  const steps = Array.from({ length: MINUTES }, (_, i) => start + i * 60);
  return {
    prometheusUrl: where.browser,
    minutes: steps.map((t) => new Date(t * 1000).toISOString().slice(11, 16)),
    lag: steps.map((t) => lag.get(t) ?? null),
    placed: steps.map((t) => (placed.has(t) ? Math.round(placed.get(t) ?? 0) : null)),
  };
}
