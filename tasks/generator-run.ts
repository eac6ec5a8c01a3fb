// Running a built generator once: a container through dockerode (create, start, follow its logs,
// wait, remove) or a node process on this machine. Its progress (stderr) streams to the task log;
// a non-zero exit fails the task with the exit code and the tail of stderr.
import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { readMultiplexedLogs, type LogStreamName } from "./docker-streams.ts";
import { throwIfAborted, WorldTaskError, type TaskIo } from "../src/world/index.ts";
import type { GeneratorBuild } from "./generator-build.ts";
import { errorMessage } from "../src/errors.ts";

const STEP = "runGenerator";
const STDERR_TAIL_LINES = 20;

export interface RunGeneratorInput extends TaskIo {
  build: GeneratorBuild;
  /** The generator's command line, e.g. ["batch", "--day", "0", "--days", "8", "--brokers", "127.0.0.1:29092"]. */
  args: readonly string[];
  /** Docker mode: the engine client (dockerode on the default socket when omitted). */
  docker?: Docker;
  /** Docker mode: the network the container joins to reach Kafka (the compose network). */
  network?: string;
}

export interface GeneratorRun {
  exitCode: number;
  seconds: number;
  /** The last lines the generator wrote to stderr (its log). */
  stderrTail: string[];
}

/** Collects output lines: stderr goes to the log and a bounded tail; stdout (data with --file -) is only counted. */
class OutputCollector {
  readonly tail: string[] = [];
  stdoutLines = 0;
  constructor(private readonly log: (line: string) => void) {}
  line(name: LogStreamName, line: string): void {
    if (name === "stdout") {
      this.stdoutLines++;
      return;
    }
    this.log(`  ${line}`);
    this.tail.push(line);
    if (this.tail.length > STDERR_TAIL_LINES) this.tail.shift();
  }
}

function failed(exitCode: number, collector: OutputCollector, where: string): WorldTaskError {
  const tail = collector.tail.length > 0 ? `; last stderr lines:\n    ${collector.tail.join("\n    ")}` : "; it wrote nothing to stderr";
  return new WorldTaskError(STEP, `the generator (${where}) exited with code ${exitCode}${tail}`);
}

export async function runGenerator(input: RunGeneratorInput): Promise<GeneratorRun> {
  throwIfAborted(input.signal, STEP);
  input.log(`generator ${input.build.hash.slice(0, 12)} (${input.build.mode}): ${input.args.join(" ")}`);
  const run = await (input.build.mode === "local" ? runLocal(input, input.build.file) : runContainer(input, input.build.image));
  // every generator command logs its progress and a last "finished" line: silence is not success
  if (run.stderrTail.length === 0) {
    throw new WorldTaskError(
      STEP,
      `the generator (${input.build.mode}) exited 0 without writing a line: it did not run '${input.args.join(" ")}'. ` +
        "Run the same command by hand to see why",
    );
  }
  return run;
}

// ---- local mode -------------------------------------------------------------------------------

function splitLines(stream: Readable, onLine: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let pending = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) onLine(line);
    });
    stream.on("end", () => {
      if (pending !== "") onLine(pending);
      resolve();
    });
    stream.on("error", reject);
  });
}

async function runLocal(input: RunGeneratorInput, file: string): Promise<GeneratorRun> {
  const started = Date.now();
  const collector = new OutputCollector(input.log);
  const child = spawn(process.execPath, [file, ...input.args], { stdio: ["ignore", "pipe", "pipe"] });
  const kill = (): void => void child.kill("SIGTERM");
  input.signal.addEventListener("abort", kill, { once: true });
  try {
    const exited = new Promise<number>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    });
    const [exitCode] = await Promise.all([
      exited,
      splitLines(child.stdout, (l) => collector.line("stdout", l)),
      splitLines(child.stderr, (l) => collector.line("stderr", l)),
    ]);
    throwIfAborted(input.signal, STEP);
    if (exitCode !== 0) throw failed(exitCode, collector, `node ${file}`);
    return { exitCode, seconds: (Date.now() - started) / 1000, stderrTail: collector.tail };
  } finally {
    input.signal.removeEventListener("abort", kill);
  }
}

// ---- docker mode ------------------------------------------------------------------------------

async function runContainer(input: RunGeneratorInput, image: string): Promise<GeneratorRun> {
  const docker = input.docker ?? new (await import("dockerode")).default();
  const started = Date.now();
  const collector = new OutputCollector(input.log);
  const container = await docker.createContainer({
    Image: image,
    Cmd: [...input.args],
    Tty: false,
    AttachStdout: true,
    AttachStderr: true,
    Labels: { "clickstream.role": "generator" },
    HostConfig: input.network ? { NetworkMode: input.network } : {},
  });
  const stop = (): void => void container.kill().catch(() => undefined);
  input.signal.addEventListener("abort", stop, { once: true });
  try {
    await container.start();
    const logs = (await container.logs({ follow: true, stdout: true, stderr: true })) as unknown as Readable;
    await readMultiplexedLogs(logs, (name, line) => collector.line(name, line));
    const { StatusCode: exitCode } = (await container.wait()) as { StatusCode: number };
    throwIfAborted(input.signal, STEP);
    if (exitCode !== 0) throw failed(exitCode, collector, `container of ${image}`);
    return { exitCode, seconds: (Date.now() - started) / 1000, stderrTail: collector.tail };
  } finally {
    input.signal.removeEventListener("abort", stop);
    await container.remove({ force: true }).catch((err: unknown) => input.log(`could not remove the generator container ${container.id}: ${errorMessage(err)}`));
  }
}
