// The Docker path of buildGenerator/runGenerator, against a recorded Docker Engine API exchange
// (fixtures/docker-engine-exchange.json) served on a unix socket: the requests dockerode sends
// must be the recorded ones, in order; a build error line fails the build naming it; a non-zero
// exit fails the run with the code and the stderr tail, and the container is still removed.
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { WorldTaskError } from "../../src/world/io.ts";
import { buildGenerator, generatorImageFor, GENERATOR_IMAGE_REPOSITORY, type GeneratorBuild } from "../../tasks/generator-build.ts";
import { runGenerator } from "../../tasks/generator-run.ts";
import { FakeDockerEngine, fillRecording, type RecordedExchange } from "../../testkit/stand/fake-docker-engine.ts";
import { recordingIo } from "../../testkit/world/recording-io.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
type Recording = Record<"generatorRun" | "failedBuild" | "failedRun", RecordedExchange[]>;
let recording: Recording;
let contextDir: string;
const CONTAINER = "4f2b9c1d8e7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c";

before(async () => {
  recording = JSON.parse(await readFile(path.join(here, "fixtures", "docker-engine-exchange.json"), "utf8")) as Recording;
  // a small build context of its own, so its content hash (the tag) does not move with generator/
  contextDir = await mkdtemp(path.join(tmpdir(), "generator-context-"));
  await mkdir(path.join(contextDir, "src"));
  await writeFile(path.join(contextDir, "Dockerfile"), 'FROM node:20-bookworm-slim\nCOPY . /app\nWORKDIR /app\nENTRYPOINT ["node", "src/cli.ts"]\n');
  await writeFile(path.join(contextDir, ".dockerignore"), "*.log\nscratch/\n");
  await writeFile(path.join(contextDir, "src", "cli.ts"), "console.error('generator');\n");
  await writeFile(path.join(contextDir, "debug.log"), "left out by .dockerignore\n");
  await mkdir(path.join(contextDir, "scratch"));
  await writeFile(path.join(contextDir, "scratch", "notes.txt"), "left out by .dockerignore\n");
});

after(() => rm(contextDir, { recursive: true, force: true }));

async function imageTag(): Promise<string> {
  return (await generatorImageFor(contextDir)).image;
}

test("build, then run: dockerode sends exactly the recorded requests, and the logs reach the task log", async () => {
  const image = await imageTag();
  assert.match(image, new RegExp(`^${GENERATOR_IMAGE_REPOSITORY}:[0-9a-f]{16}$`));
  const engine = await FakeDockerEngine.start(fillRecording(recording.generatorRun, { image, container: CONTAINER }));
  try {
    const io = recordingIo();
    const build = await buildGenerator({ ...io, mode: "docker", generatorDir: contextDir, docker: engine.client() });
    assert.deepEqual(build, { mode: "docker", hash: build.hash, image, reused: false });
    const run = await runGenerator({ ...io, build, args: ["batch", "--day", "0", "--brokers", "kafka:9092"], docker: engine.client(), network: "clickstream" });
    assert.equal(run.exitCode, 0);
    assert.deepEqual(engine.mismatches, [], "every request matched the recording");
    assert.deepEqual(engine.unplayed, [], "every recorded request was made");
    const context = engine.seen.find((r) => r.path === "/build")?.contextFiles;
    assert.deepEqual(context, [".dockerignore", "Dockerfile", "src/cli.ts"], "the context is the tree minus .dockerignore");
    assert.ok(io.lines.some((l) => l.includes("Step 4/4 : ENTRYPOINT")), "build output is logged");
    // a log line cut across two frames arrives whole
    assert.ok(io.lines.includes("  2026-11-29T10:00:00.701Z INFO  generator: batch finished: 12,179 hits in 0.7 s"), io.lines.join("\n"));
  } finally {
    await engine.stop();
  }
});

test("an image already tagged with the context hash is reused, not rebuilt", async () => {
  const image = await imageTag();
  const [ping, , , inspected] = fillRecording(recording.generatorRun, { image, container: CONTAINER });
  assert.ok(ping && inspected);
  const engine = await FakeDockerEngine.start([ping, inspected]);
  try {
    const build = await buildGenerator({ ...recordingIo(), mode: "docker", generatorDir: contextDir, docker: engine.client() });
    assert.equal(build.reused, true);
    assert.deepEqual(engine.mismatches, []);
    assert.ok(!engine.seen.some((r) => r.path === "/build"), "no build request");
  } finally {
    await engine.stop();
  }
});

test("an error line in the build stream fails buildGenerator, naming the error", async () => {
  const image = await imageTag();
  const engine = await FakeDockerEngine.start(fillRecording(recording.failedBuild, { image }));
  try {
    await assert.rejects(buildGenerator({ ...recordingIo(), mode: "docker", generatorDir: contextDir, docker: engine.client() }), (err: unknown) => {
      assert.ok(err instanceof WorldTaskError);
      assert.match(err.message, new RegExp(`docker build of ${image} failed: The command '/bin/sh -c npm ci --omit=dev' returned a non-zero code: 1`));
      assert.match(err.message, /"errorDetail"/, "the build output line is quoted");
      return true;
    });
    assert.deepEqual(engine.mismatches, []);
  } finally {
    await engine.stop();
  }
});

test("a generator container exiting non-zero fails the run with its code and stderr, and is removed", async () => {
  const image = `${GENERATOR_IMAGE_REPOSITORY}:0123456789abcdef`;
  const engine = await FakeDockerEngine.start(fillRecording(recording.failedRun, { image, container: CONTAINER }));
  const build: GeneratorBuild = { mode: "docker", hash: "0123456789abcdef", image, reused: true };
  try {
    await assert.rejects(runGenerator({ ...recordingIo(), build, args: ["batch", "--brokers", "kafka:9092"], docker: engine.client() }), (err: unknown) => {
      assert.ok(err instanceof WorldTaskError);
      assert.match(err.message, /exited with code 2/);
      assert.match(err.message, /--day \(GENERATOR_DAY\) is required/);
      return true;
    });
    assert.deepEqual(engine.mismatches, []);
    assert.deepEqual(engine.unplayed, [], "the container was removed after the failure");
  } finally {
    await engine.stop();
  }
});
