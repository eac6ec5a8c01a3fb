// The services' test-only door: the fail points a test stand arms to make a service's starts fail
// (keeper.fail_points in the stand config, refused in the user's stand.yaml by parseStandConfig).
// Every test hook of this room is here; nothing else in src/services reads a fail point.
import { existsSync } from "node:fs";
import path from "node:path";
import type { StandConfig } from "../config/index.ts";
import type { StandPaths } from "./paths.ts";
import type { StartSpec } from "./supervisor.ts";

/** The file that, on a stand with keeper.fail_points, makes every start of `service` exit at once. */
export function startFailPointFile(ctx: { paths: StandPaths }, service: string): string {
  return path.join(ctx.paths.root, "keeper", "fail-points", service);
}

/**
 * The test stand's "binary that exits at once": with keeper.fail_points on and the service's fail
 * point file present, what is launched is a shell that prints so and exits with code 3 (the
 * marker stays in its command line). Whoever starts it (stand up, the keeper) gets the same.
 */
export function withStartFailPoint(ctx: { config: StandConfig; paths: StandPaths }, spec: StartSpec): StartSpec {
  const file = startFailPointFile(ctx, spec.service);
  if (ctx.config.keeper?.fail_points !== true || !existsSync(file)) return spec;
  return { ...spec, command: "/bin/sh", args: ["-c", `echo "keeper fail point ${file}: this start of ${spec.service} exits at once with code 3"; exit 3`, spec.marker] };
}
