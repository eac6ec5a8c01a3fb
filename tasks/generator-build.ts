// Building the generator the world is played with, named by the sha256 of its inputs so the world
// never comes from old code. Docker mode: the image from generator/Dockerfile (context generator/,
// its own .dockerignore) through dockerode, tagged clickstream-generator:<hash>. Local mode (no
// Docker engine here): generator/src/cli.ts bundled by esbuild into
// .stand/generator/<hash>/generator.mjs, reused when that hash was built before.
import { access, mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { build } from "esbuild";
import { repoRoot, stateDir, loadStandConfig, type StandConfig } from "../src/config/index.ts";
import { WORLD_SIZE_NAMES } from "../generator/src/index.ts";
import { GENERATOR_DIR, CATALOG_CSV_PATH, passportPath, throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import { readBuildStream } from "./docker-streams.ts";
import { hashInputs, listBuildContext, listTreeFiles } from "./file-tree.ts";
import { errorMessage } from "../src/errors.ts";

const STEP = "buildGenerator";
export const GENERATOR_IMAGE_REPOSITORY = "clickstream-generator";

/** Where the generator runs: a container (docker) or a node process on this machine (local). */
export type GeneratorMode = "docker" | "local";

export type GeneratorBuild =
  | { mode: "local"; hash: string; file: string; reused: boolean }
  | { mode: "docker"; hash: string; image: string; reused: boolean };

export interface BuildGeneratorInput extends TaskIo {
  mode: GeneratorMode;
  /** The generator's directory (its src/, Dockerfile, .dockerignore); generator/ by default. */
  generatorDir?: string;
  /** Docker mode: the engine client (dockerode on the default socket when omitted). */
  docker?: Docker;
  config?: StandConfig;
}

export async function buildGenerator(input: BuildGeneratorInput): Promise<GeneratorBuild> {
  throwIfAborted(input.signal, STEP);
  return input.mode === "docker" ? buildGeneratorImage(input) : buildGeneratorBundle(input);
}

// ---- local mode -------------------------------------------------------------------------------

async function exists(file: string): Promise<boolean> {
  return access(file).then(() => true, () => false);
}

/** sha256 over the generator's sources, the world data it is checked against, and the lockfile (bundled dependency versions). */
async function localBuildHash(generatorDir: string): Promise<string> {
  const data = [...WORLD_SIZE_NAMES.map(passportPath), CATALOG_CSV_PATH].map((f) => path.relative(repoRoot, f));
  return hashInputs([
    { root: generatorDir, files: await listTreeFiles(generatorDir), label: "generator" },
    { root: repoRoot, files: [...data, "package-lock.json"], label: "repo" },
  ]);
}

async function buildGeneratorBundle(input: BuildGeneratorInput): Promise<GeneratorBuild> {
  const generatorDir = input.generatorDir ?? GENERATOR_DIR;
  const entry = path.join(generatorDir, "src", "cli.ts");
  if (!(await exists(entry))) throw new WorldTaskError(STEP, `the generator entry point ${entry} does not exist`);
  const hash = await localBuildHash(generatorDir);
  const outDir = path.join(stateDir(input.config ?? loadStandConfig()), "generator", hash);
  const file = path.join(outDir, "generator.mjs");
  if (await exists(file)) {
    input.log(`generator ${hash.slice(0, 12)}: reusing ${path.relative(repoRoot, file)}`);
    return { mode: "local", hash, file, reused: true };
  }
  await mkdir(outDir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  const started = Date.now();
  try {
    const result = await build({
      entryPoints: [entry],
      outfile: partial,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "silent",
      // CommonJS dependencies (kafkajs, commander) call require(); an ES module has none of its own
      banner: { js: 'import { createRequire as __generatorCreateRequire } from "node:module";\nconst require = __generatorCreateRequire(import.meta.url);' },
    });
    for (const warning of result.warnings) input.log(`esbuild warning: ${warning.text}`);
    await rename(partial, file); // a crash mid-build never leaves a file under the hash name
  } catch (err) {
    await rm(partial, { force: true });
    throw new WorldTaskError(STEP, `bundling ${path.relative(repoRoot, entry)} failed: ${errorMessage(err)}`, { cause: err });
  }
  input.log(`generator ${hash.slice(0, 12)}: bundled into ${path.relative(repoRoot, file)} in ${Date.now() - started} ms`);
  return { mode: "local", hash, file, reused: false };
}

// ---- docker mode ------------------------------------------------------------------------------

async function connectDocker(input: BuildGeneratorInput): Promise<Docker> {
  if (input.docker) return input.docker;
  const { default: DockerClient } = await import("dockerode");
  return new DockerClient();
}

async function imageExists(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

/** The generator image a build context makes: its files (after .dockerignore), their hash and the tag named by it. */
export async function generatorImageFor(contextDir: string): Promise<{ files: string[]; hash: string; image: string }> {
  const files = await listBuildContext(contextDir);
  const hash = await hashInputs([{ root: contextDir, files, label: "context" }]);
  return { files, hash, image: `${GENERATOR_IMAGE_REPOSITORY}:${hash.slice(0, 16)}` };
}

async function buildGeneratorImage(input: BuildGeneratorInput): Promise<GeneratorBuild> {
  const contextDir = input.generatorDir ?? GENERATOR_DIR;
  if (!(await exists(path.join(contextDir, "Dockerfile")))) {
    throw new WorldTaskError(STEP, `${path.join(contextDir, "Dockerfile")} does not exist: the generator image is built from its own Dockerfile in ${contextDir}`);
  }
  const docker = await connectDocker(input);
  try {
    await docker.ping();
  } catch (err) {
    throw new WorldTaskError(STEP, `no Docker engine answers (${errorMessage(err)}); start Docker or use the local generator mode`, { cause: err });
  }
  const { files, hash, image } = await generatorImageFor(contextDir);
  if (await imageExists(docker, image)) {
    input.log(`generator image ${image}: exists, reusing it`);
    return { mode: "docker", hash, image, reused: true };
  }
  input.log(`building generator image ${image} from ${contextDir} (${files.length} files)`);
  const stream = (await docker.buildImage({ context: contextDir, src: files }, { t: image, dockerfile: "Dockerfile" })) as Readable;
  // dockerode would put an abortSignal option into the query string; cancel by closing the stream
  const cancel = (): void => void stream.destroy(new Error("cancelled"));
  input.signal.addEventListener("abort", cancel, { once: true });
  let events;
  try {
    events = await readBuildStream(stream, (event) => {
      if (event.kind === "output") input.log(`  ${event.text}`);
    });
  } finally {
    input.signal.removeEventListener("abort", cancel);
  }
  throwIfAborted(input.signal, STEP);
  const failure = events.find((e) => e.kind === "error");
  if (failure?.kind === "error") {
    throw new WorldTaskError(STEP, `docker build of ${image} failed: ${failure.message} (build output line: ${failure.line}); fix generator/Dockerfile or the sources and rerun`);
  }
  if (!(await imageExists(docker, image))) throw new WorldTaskError(STEP, `docker build of ${image} ended without an error but the engine has no such image`);
  input.log(`generator image ${image}: built`);
  return { mode: "docker", hash, image, reused: false };
}
