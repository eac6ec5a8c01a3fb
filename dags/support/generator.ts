// Where the generator runs and how it reaches Kafka. Inside the compose runner container (a
// /.dockerenv and the host's Docker socket) it is the canonical image on the compose network;
// on the local-process stand it is the local bundle (tasks/generator-build.ts), a node process.
import { existsSync } from "node:fs";
import { kafkaBroker, loadStandConfig } from "../../src/config/index.ts";
import type { TaskContext } from "../../src/runner/index.ts";
import { buildGenerator, type GeneratorBuild, type GeneratorMode, runGenerator, type GeneratorRun } from "../../tasks/index.ts";
import { taskIo } from "./world-io.ts";

/** docker-compose.yml's network name, which the generator container joins to reach `kafka`. */
const COMPOSE_NETWORK = "clickstream-stand";

export function generatorMode(): GeneratorMode {
  return existsSync("/.dockerenv") && existsSync("/var/run/docker.sock") ? "docker" : "local";
}

export async function buildWorldGenerator(ctx: TaskContext<unknown>): Promise<GeneratorBuild> {
  return buildGenerator({ ...taskIo(ctx), mode: generatorMode() });
}

/**
 * Runs one generator command against the world's broker, at the stand's world size (world.size). The build is asked for again (it is named
 * by the hash of its inputs, so this is a lookup when the build step already made it).
 */
export async function runWorldGenerator(ctx: TaskContext<unknown>, args: readonly string[]): Promise<GeneratorRun> {
  const build = await buildWorldGenerator(ctx);
  const run = await runGenerator({
    ...taskIo(ctx),
    build,
    args: [...args, "--brokers", kafkaBroker(), "--size", loadStandConfig().world.size],
    network: build.mode === "docker" ? COMPOSE_NETWORK : undefined,
  });
  ctx.log.info(`generator ${args[0] ?? ""} finished in ${run.seconds.toFixed(1)} s`);
  return run;
}
