// Parses DAG files in isolation: one worker thread (parse-worker.ts under tsx's loader, with a heap
// limit) imports each file's bundle, so a file that throws, exits, eats memory or never finishes
// its top level costs that file an import error and nothing else. A file that outruns the timeout
// is paused through the inspector first, so its import error names the line it was stuck on, then
// its worker is stopped; the next file gets a new one. A worker stays for the next scan (starting
// one loads the engine, seconds on a loaded machine) until it is idle for a minute or has imported
// RECYCLE_AFTER bundles (each stays in its module cache); a worker that does not stop in time is
// left behind, unreferenced, so the processor never waits on one.
import { Session } from "node:inspector/promises";
import { SourceMap, type SourceMapping } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { repoRoot } from "../config/index.ts";
import { coerceError } from "../errors.ts";
import type { ParseJob, ParseReply } from "./parse-worker.ts";
import { filelocOf } from "./bundle.ts";

export type ParseOutcome = { ok: true; dagIds: string[]; ms: number } | { ok: false; stack: string; ms: number };

const WORKER_URL = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), "parse-worker.ts")).href;
const TSX_API = import.meta.resolve("tsx/esm/api");
const BOOTSTRAP = `import(${JSON.stringify(TSX_API)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL)}); })`;
const HEAP_LIMIT_MB = 512;
const RECYCLE_AFTER = 200;
const IDLE_MS = 60_000;
/** How long terminate() may take before the worker is left behind (a thread paused in the debugger never stops). */
const TERMINATE_MS = 5_000;
/** How long the inspector may take to attach to the worker, and then to pause it. */
const INSPECTOR_MS = 5_000;

interface Pending {
  resolve(outcome: ParseOutcome): void;
  started: number;
}

export class IsolatedParser {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private pending: Pending | undefined;
  private nextId = 1;
  private imported = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {}

  /** Imports the bundle at `file` (the code of `fileloc`) in the worker; never throws. */
  async parse(file: string, fileloc: string, code: string): Promise<ParseOutcome> {
    const started = performance.now();
    clearTimeout(this.idleTimer);
    try {
      if (this.imported >= RECYCLE_AFTER) await this.stop();
      const worker = await this.start();
      this.imported += 1;
      const outcome = new Promise<ParseOutcome>((resolve) => (this.pending = { resolve, started }));
      const job: ParseJob = { id: this.nextId++, file, fileloc };
      worker.postMessage(job);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), this.timeoutMs)));
      const first = await Promise.race([outcome, timedOut]);
      clearTimeout(timer);
      if (first !== "timeout") return first;
      const where = await pausedAt(worker, file, code).catch((err: unknown) => `(where it was could not be read: ${coerceError(err).message})`);
      this.pending = undefined;
      await this.stop();
      return {
        ok: false,
        ms: performance.now() - started,
        stack: `Error: ${fileloc}: its top level did not finish within ${this.timeoutMs / 1000} s (runner.dags.parse_timeout_seconds): a loop, or a wait that never ends; the parse was stopped\n${where}`,
      };
    } catch (err) {
      this.pending = undefined;
      await this.stop();
      return { ok: false, ms: performance.now() - started, stack: `${fileloc}: the parse worker failed: ${coerceError(err).stack ?? String(err)}` };
    }
  }

  /** Between scans: the worker is stopped if no parse comes within IDLE_MS. */
  idle(): void {
    clearTimeout(this.idleTimer);
    if (!this.worker) return;
    this.idleTimer = setTimeout(() => void this.stop(), IDLE_MS);
    this.idleTimer.unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    this.imported = 0;
    if (!worker) return;
    const stopped = await Promise.race([worker.terminate().then(() => true), sleep(TERMINATE_MS, false, { ref: false })]);
    if (!stopped) {
      worker.unref();
      this.logger.error({ threadId: worker.threadId }, `the DAG parse worker did not stop within ${TERMINATE_MS / 1000} s; it is left behind and a new one parses the next file`);
    }
  }

  private start(): Promise<Worker> {
    if (this.worker && this.ready) {
      const worker = this.worker;
      return this.ready.then(() => worker);
    }
    const worker = new Worker(BOOTSTRAP, { eval: true, resourceLimits: { maxOldGenerationSizeMb: HEAP_LIMIT_MB }, stdout: false, stderr: false });
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: unknown) => {
        if ((m as { ready?: boolean }).ready) {
          worker.off("message", onMessage);
          resolve();
        }
      };
      worker.on("message", onMessage);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the parse worker exited (${code}) before it was ready`)));
    });
    worker.on("message", (m: ParseReply | { ready: true }) => {
      if ("ready" in m) return;
      const pending = this.pending;
      this.pending = undefined;
      pending?.resolve(m.ok ? { ok: true, dagIds: m.dagIds, ms: m.ms } : { ok: false, stack: m.stack, ms: m.ms });
    });
    // a file can end the worker (process.exit at its top level, a rejection nobody awaited, the heap limit)
    worker.on("error", (err) => this.lost(worker, `its parse ended the worker: ${coerceError(err).stack ?? String(err)}`));
    worker.on("exit", (code) => this.lost(worker, `its top level ended the worker (exit code ${code}: process.exit, or the ${HEAP_LIMIT_MB} MB heap limit)`));
    return this.ready.then(() => worker);
  }

  private lost(worker: Worker, why: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.ready = undefined;
    const pending = this.pending;
    this.pending = undefined;
    if (pending) pending.resolve({ ok: false, stack: `Error: ${why}`, ms: performance.now() - pending.started });
    else this.logger.warn({ why }, "the DAG parse worker ended between files");
  }
}

interface CallFrame {
  functionName: string;
  url: string;
  location: { scriptId: string; lineNumber: number; columnNumber?: number };
}

/** Pauses the worker where it is (the inspector interrupts even a loop) and names the frames, the bundle's mapped back to the DAG file. */
async function pausedAt(worker: Worker, file: string, code: string): Promise<string> {
  const session = new Session();
  session.connect();
  // once a pause was asked for, the thread is let run again on every path (a paused thread cannot be terminated)
  let pauseSent: (() => Promise<unknown>) | undefined;
  try {
    const attached = new Promise<string>((resolve) => {
      session.on("NodeWorker.attachedToWorker", (m) => {
        // workerId is the inspector's own count; the title names the thread
        const params = m.params as { sessionId: string; workerInfo: { title: string } };
        if (params.workerInfo.title === `[worker ${worker.threadId}]`) resolve(params.sessionId);
      });
    });
    await session.post("NodeWorker.enable", { waitForDebuggerOnStart: false });
    const sessionId = await withTimeout(attached, INSPECTOR_MS, "the worker's inspector did not attach");
    // an ES module's frames carry only a script id: Debugger.enable announces every script's url
    const scripts = new Map<string, string>();
    const paused = new Promise<CallFrame[]>((resolve) => {
      session.on("NodeWorker.receivedMessageFromWorker", (m) => {
        const msg = JSON.parse((m.params as { message: string }).message) as { method?: string; params?: { callFrames?: CallFrame[]; scriptId?: string; url?: string } };
        if (msg.method === "Debugger.scriptParsed" && msg.params?.scriptId && msg.params.url) scripts.set(msg.params.scriptId, msg.params.url);
        if (msg.method === "Debugger.paused" && msg.params?.callFrames) resolve(msg.params.callFrames);
      });
    });
    const send = (id: number, method: string) =>
      session.post("NodeWorker.sendMessageToWorker", { sessionId, message: JSON.stringify({ id, method }) });
    await send(1, "Debugger.enable");
    pauseSent = () => send(3, "Debugger.resume").then(() => send(4, "Debugger.disable"));
    await send(2, "Debugger.pause");
    const frames = (await withTimeout(paused, INSPECTOR_MS, "the worker did not pause")).map((f) => ({ ...f, url: f.url || (scripts.get(f.location.scriptId) ?? "") }));
    const map = inlineSourceMap(code);
    const bundleUrl = pathToFileURL(file).href;
    return frames
      .slice(0, 10)
      .map((f) => {
        const line = f.location.lineNumber;
        const column = f.location.columnNumber ?? 0;
        const entry = (f.url === bundleUrl && map ? map.findEntry(line, column) : {}) as Partial<SourceMapping>;
        if (entry.originalSource !== undefined && entry.originalLine !== undefined && entry.originalColumn !== undefined) {
          const source = entry.originalSource.startsWith("file:") ? fileURLToPath(entry.originalSource) : path.resolve(path.dirname(file), entry.originalSource);
          return `    at ${f.functionName || "<top level>"} (${filelocOf(source)}:${entry.originalLine + 1}:${entry.originalColumn + 1})`;
        }
        const where = f.url.startsWith("file:") ? path.relative(repoRoot, fileURLToPath(f.url)) : f.url;
        return `    at ${f.functionName || "<top level>"} (${where}:${line + 1}:${column + 1})`;
      })
      .join("\n");
  } finally {
    await pauseSent?.().catch(() => undefined);
    session.disconnect();
  }
}

function inlineSourceMap(code: string): SourceMap | undefined {
  const match = /\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]+)\s*$/.exec(code);
  if (!match?.[1]) return undefined;
  return new SourceMap(JSON.parse(Buffer.from(match[1], "base64").toString("utf8")) as ConstructorParameters<typeof SourceMap>[0]);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
