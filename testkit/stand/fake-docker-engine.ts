// A stand-in Docker Engine for tests: serves a recorded list of request/response pairs of the
// Engine API on a unix socket, in order, and keeps what dockerode actually sent so a test can
// compare it with the recording. A request that differs from the next recorded one is answered
// 500 and noted as a mismatch. Build contexts (gzipped tar) are unpacked to their file names.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import Docker from "dockerode";
import { multiplexedFrame } from "../../tasks/index.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  query?: Record<string, string>;
  json?: unknown;
}

export interface RecordedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  json?: unknown;
  /** A streamed JSON-lines body (docker build). */
  lines?: unknown[];
  /** A multiplexed log body: [stream, text] frames. */
  frames?: ["stdout" | "stderr", string][];
}

export interface RecordedExchange {
  request: RecordedRequest;
  response: RecordedResponse;
}

export interface SeenRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  json?: unknown;
  /** File names in a build context. */
  contextFiles?: string[];
}

/** Replaces {name} in every string of a recorded value. */
export function fillRecording<T>(value: T, vars: Record<string, string>): T {
  return JSON.parse(JSON.stringify(value), (_key, v: unknown) =>
    typeof v === "string" ? v.replace(/\{(\w+)\}/g, (m, name: string) => vars[name] ?? m) : v,
  ) as T;
}

/** Names of the files in a ustar archive (512-byte headers; name at 0, octal size at 124). */
function tarFileNames(tar: Buffer): string[] {
  const names: string[] = [];
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const name = header.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
    const prefix = header.subarray(345, 500).toString("utf8").replace(/\0.*$/s, "");
    const size = parseInt(header.subarray(124, 136).toString("utf8").replace(/\0.*$/s, "").trim() || "0", 8);
    if (header[156] === 48 || header[156] === 0) names.push(prefix ? `${prefix}/${name}` : name);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return names.sort();
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function describeRequest(request: RecordedRequest | SeenRequest): string {
  const query = request.query && Object.keys(request.query).length > 0 ? `?${new URLSearchParams(request.query).toString()}` : "";
  return `${request.method} ${request.path}${query}`;
}

export class FakeDockerEngine {
  readonly seen: SeenRequest[] = [];
  readonly mismatches: string[] = [];
  private next = 0;

  private constructor(
    private readonly server: Server,
    private readonly dir: string,
    readonly socketPath: string,
    private readonly exchanges: readonly RecordedExchange[],
  ) {}

  static async start(exchanges: readonly RecordedExchange[]): Promise<FakeDockerEngine> {
    const dir = await mkdtemp(path.join(tmpdir(), "fake-docker-"));
    const socketPath = path.join(dir, "docker.sock");
    const handler: { engine?: FakeDockerEngine } = {};
    const server = createServer((req, res) => void handler.engine?.handle(req, res));
    const engine = new FakeDockerEngine(server, dir, socketPath, exchanges);
    handler.engine = engine;
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    return engine;
  }

  /** A dockerode client talking to this engine. */
  client(): Docker {
    return new Docker({ socketPath: this.socketPath });
  }

  /** The recorded requests not (yet) asked for. */
  get unplayed(): string[] {
    return this.exchanges.slice(this.next).map((e) => describeRequest(e.request));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://docker");
    const body = await readBody(req);
    const seen: SeenRequest = { method: req.method ?? "", path: decodeURIComponent(url.pathname), query: Object.fromEntries(url.searchParams) };
    if (seen.path === "/build" && body.length > 0) seen.contextFiles = tarFileNames(gunzipSync(body));
    else if (body.length > 0) seen.json = JSON.parse(body.toString("utf8"));
    this.seen.push(seen);
    const expected = this.exchanges[this.next];
    const problem = expected ? this.compare(expected.request, seen) : "no more recorded requests";
    if (!expected || problem) {
      this.mismatches.push(`request ${this.seen.length} ${describeRequest(seen)}: ${problem}`);
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ message: `fake engine: ${problem}` }));
      return;
    }
    this.next++;
    this.respond(expected.response, res);
  }

  private compare(expected: RecordedRequest, seen: SeenRequest): string | undefined {
    if (expected.method !== seen.method || expected.path !== seen.path) return `expected ${describeRequest(expected)}`;
    for (const [key, value] of Object.entries(expected.query ?? {})) {
      if (seen.query[key] !== value) return `query ${key}=${seen.query[key]} where the recording has ${value}`;
    }
    if (expected.json !== undefined && JSON.stringify(expected.json) !== JSON.stringify(seen.json)) {
      return `body ${JSON.stringify(seen.json)} where the recording has ${JSON.stringify(expected.json)}`;
    }
    return undefined;
  }

  private respond(response: RecordedResponse, res: ServerResponse): void {
    if (response.frames) {
      res.writeHead(response.status, response.headers);
      for (const [name, text] of response.frames) res.write(multiplexedFrame(name, text));
      res.end();
    } else if (response.lines) {
      res.writeHead(response.status, response.headers);
      for (const line of response.lines) res.write(`${JSON.stringify(line)}\r\n`);
      res.end();
    } else if (response.json !== undefined) {
      res.writeHead(response.status, { "content-type": "application/json", ...response.headers }).end(JSON.stringify(response.json));
    } else {
      res.writeHead(response.status, response.headers).end(response.body ?? "");
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.dir, { recursive: true, force: true });
  }
}
