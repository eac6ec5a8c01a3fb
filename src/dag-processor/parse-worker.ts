// The isolated parse of DAG files: a worker thread (parser.ts starts it, with tsx's loader, and
// stops it when a file's top level does not finish in time) imports each bundle it is sent and
// answers which DAGs it declares, or the error with its stack (source-mapped to the DAG file).
import { parentPort } from "node:worker_threads";
import { pathToFileURL } from "node:url";
import { dagsOfModule, stackOf } from "./dag-module.ts";

export interface ParseJob {
  id: number;
  file: string;
  fileloc: string;
}

export type ParseReply = { id: number; ok: true; dagIds: string[]; ms: number } | { id: number; ok: false; stack: string; ms: number };

process.setSourceMapsEnabled(true);
const port = parentPort;
if (!port) throw new Error("parse-worker.ts runs as a worker thread of the DAG processor (parser.ts)");

port.on("message", (job: ParseJob) => {
  const started = performance.now();
  void (async () => {
    let reply: ParseReply;
    try {
      const dags = dagsOfModule(await import(pathToFileURL(job.file).href), job.fileloc);
      reply = { id: job.id, ok: true, dagIds: dags.map((d) => d.id), ms: performance.now() - started };
    } catch (err) {
      reply = { id: job.id, ok: false, stack: stackOf(err), ms: performance.now() - started };
    }
    port.postMessage(reply);
  })();
});
port.postMessage({ ready: true });
