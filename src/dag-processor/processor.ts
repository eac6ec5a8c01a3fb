// Airflow's DAG processor, for a runner or a pool of them. One runner parses (the holder of
// advisory lock 7302/0 on its own connection; when it dies the lock goes with its connection and
// another takes it within leaderRetryMs): it watches the DAG folders (a file watcher, and a rescan
// of sizes and mtimes as the safety net), bundles every DAG file, parses the new and changed ones
// in isolation (parser.ts), checks the set (one owner per DAG id, known trigger targets, no trigger
// loops), and publishes versions, stale DAGs and import errors in Postgres. Every runner, the
// parsing one too, then takes its DAGs from Postgres (on NOTIFY, and by a slow poll as a net):
// the latest version of each DAG that is not stale, imported from its stored bundle.
import { watch, type FSWatcher } from "node:fs";
import pg from "pg";
import type { Logger } from "pino";
import { coerceError } from "../errors.ts";
import {
  type CurrentDag,
  type Dag,
  DagDefinitionError,
  DagRegistry,
  DAGS_CHANNEL,
  knownCodeHashes,
  PARSE_CHANNEL,
  type PublishedDag,
  publishDags,
  readCurrentDags,
  type Runner,
  takeParseRequests,
} from "../runner/index.ts";
import { type Bundle, BundleError, bundleDagFile, bundleFile, filelocOf } from "./bundle.ts";
import { stackOf } from "./dag-module.ts";
import { discoverDagFiles, folderSignature } from "./discover.ts";
import { IsolatedParser } from "./parser.ts";
import { importBundle, loadVersion } from "./versions.ts";

/** A folder of DAG files (Airflow 3's DAG bundle, local kind). */
export interface DagFolder {
  name: string;
  dir: string;
}

export interface DagProcessorOptions {
  pgUrl: string;
  folders: readonly DagFolder[];
  /** A file whose top level runs longer is an import error (Airflow's dag_file_processor_timeout). */
  parseTimeoutMs: number;
  /** The safety net under the watcher: how often the parsing runner compares the folders' files. */
  rescanMs: number;
  /** How often a runner that does not parse tries to become the one that does. */
  leaderRetryMs?: number;
  logger: Logger;
}

const LEADER_LOCK = [7302, 0] as const;
const APPLY_POLL_MS = 10_000;
const WATCH_SETTLE_MS = 50;
/** How many broken bundles a parser remembers (their errors reused while the file is unchanged). */
const MAX_REMEMBERED_FAILURES = 500;

interface ParsedFile {
  bundle: Bundle;
  dags: Dag[];
  reparsed: boolean;
  ms: number | null;
}

export class DagProcessor {
  private readonly pool: pg.Pool;
  private readonly parser: IsolatedParser;
  private readonly logger: Logger;
  private runner: Runner | undefined;
  private client: pg.Client | undefined;
  private leader = false;
  private stopped = false;
  private watchers: FSWatcher[] = [];
  private timers: NodeJS.Timeout[] = [];
  private settleTimer: NodeJS.Timeout | undefined;
  private signature: string | undefined;
  /** Bundles this runner saw parse cleanly, and the file+hash pairs it published. */
  private readonly parsedOk = new Set<string>();
  /** Bundles that did not parse, with why: an unchanged broken file is not parsed again (a file
   * whose top level loops would cost the parse timeout on every scan) until it changes or a
   * PUT parseDagFile asks for it. Bounded: cleared past MAX_REMEMBERED_FAILURES. */
  private readonly parseFailures = new Map<string, string>();
  private parses = 0;
  private readonly published = new Set<string>();
  private scanning: Promise<void> = Promise.resolve();
  private scanQueued = false;
  private applying: Promise<void> = Promise.resolve();
  private applyQueued = false;
  private readonly forced = new Set<string>();

  constructor(private readonly options: DagProcessorOptions) {
    this.logger = options.logger;
    this.pool = new pg.Pool({ connectionString: options.pgUrl, max: 3, application_name: "dag-processor" });
    this.pool.on("error", (err) => this.logger.warn({ err }, "DAG processor: idle Postgres connection failed"));
    this.parser = new IsolatedParser(options.parseTimeoutMs, options.logger);
  }

  /** For the engine: a version this runner has not loaded (RunnerOptions.loadDagVersion). */
  readonly loadVersion = (versionId: string): Promise<Dag | undefined> => loadVersion(this.pool, versionId);

  get isLeader(): boolean {
    return this.leader;
  }

  /** How many files this processor has parsed in isolation (the log's parsedInIsolation, summed). */
  get isolatedParses(): number {
    return this.parses;
  }

  /** Takes part: tries to parse (a scan first when it may), then takes the DAGs Postgres has. */
  async start(runner: Runner): Promise<void> {
    this.runner = runner;
    await this.connect();
    await this.applyNow();
    this.timers.push(setInterval(() => void this.applySoon(), APPLY_POLL_MS));
    this.timers.push(
      setInterval(() => {
        if (this.stopped) return;
        if (!this.client) void this.connect().catch((err: unknown) => this.logger.warn({ err: coerceError(err) }, "DAG processor: Postgres not reachable"));
        else if (!this.leader) void this.tryLead().catch((err: unknown) => this.logger.warn({ err: coerceError(err) }, "DAG processor: taking the parse lock failed"));
      }, this.options.leaderRetryMs ?? 2000),
    );
    this.timers.push(setInterval(() => void this.rescan(), this.options.rescanMs));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.settleTimer);
    this.unwatch();
    await this.scanning.catch(() => undefined);
    await this.applying.catch(() => undefined);
    await this.parser.stop();
    const client = this.client;
    this.client = undefined;
    this.leader = false;
    await client?.end().catch(() => undefined);
    await this.pool.end();
  }

  /** Parses now (the files named always, as PUT parseDagFile asks) and waits for this runner to take the result. */
  async scanNow(force: readonly string[] = []): Promise<void> {
    for (const f of force) this.forced.add(f);
    this.signature = undefined;
    await this.scanSoon();
    await this.applyNow();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.pgUrl, application_name: "dag-processor" });
    client.on("error", (err) => this.lostConnection(client, err));
    client.on("end", () => this.lostConnection(client, new Error("connection ended")));
    await client.connect();
    await client.query(`listen ${DAGS_CHANNEL}`);
    await client.query(`listen ${PARSE_CHANNEL}`);
    client.on("notification", (n) => {
      if (n.channel === DAGS_CHANNEL) void this.applySoon();
      else if (n.channel === PARSE_CHANNEL && this.leader) void this.takeRequests();
    });
    this.client = client;
    await this.tryLead();
  }

  private lostConnection(client: pg.Client, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.leader) this.logger.warn({ err: coerceError(err) }, "DAG processor: the parse lock's connection was lost; parsing stops until the lock is taken again");
    this.leader = false;
    this.unwatch();
  }

  private async tryLead(): Promise<void> {
    const client = this.client;
    if (!client || this.leader || this.stopped) return;
    const { rows } = await client.query<{ locked: boolean }>("select pg_try_advisory_lock($1, $2) as locked", [...LEADER_LOCK]);
    if (!rows[0]?.locked || this.client !== client) return;
    this.leader = true;
    this.logger.info({ folders: this.options.folders.map((f) => f.dir) }, "DAG processor: this runner parses the DAG folders");
    this.watchFolders();
    this.signature = undefined;
    await this.takeRequests();
    await this.scanSoon();
  }

  private watchFolders(): void {
    for (const folder of this.options.folders) {
      try {
        const watcher = watch(folder.dir, { recursive: true }, () => {
          clearTimeout(this.settleTimer);
          this.settleTimer = setTimeout(() => void this.rescan(), WATCH_SETTLE_MS);
        });
        watcher.on("error", (err) => this.logger.warn({ err, dir: folder.dir }, "DAG processor: the folder watcher failed; the rescan goes on"));
        this.watchers.push(watcher);
      } catch (err) {
        this.logger.warn({ err: coerceError(err), dir: folder.dir }, `DAG processor: cannot watch ${folder.dir}; the rescan every ${this.options.rescanMs} ms goes on`);
      }
    }
  }

  private unwatch(): void {
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }

  private async takeRequests(): Promise<void> {
    const files = await takeParseRequests(this.pool);
    if (files.length === 0) return;
    for (const f of files) this.forced.add(f);
    this.signature = undefined;
    await this.scanSoon();
  }

  /** Scans when the folders changed since the last scan. */
  private async rescan(): Promise<void> {
    if (!this.leader || this.stopped) return;
    try {
      const signature = await folderSignature(this.options.folders.map((f) => f.dir));
      if (signature === this.signature) return;
      await this.scanSoon();
    } catch (err) {
      this.logger.error({ err: coerceError(err) }, "DAG processor: reading the DAG folders failed");
    }
  }

  /** One scan at a time; a request during one makes one more after it. */
  private scanSoon(): Promise<void> {
    if (this.scanQueued) return this.scanning;
    this.scanQueued = true;
    this.scanning = this.scanning.then(async () => {
      this.scanQueued = false;
      if (!this.leader || this.stopped) return;
      try {
        await this.scan();
      } catch (err) {
        this.signature = undefined; // try again at the next rescan
        this.logger.error({ err: coerceError(err) }, "DAG processor: a scan of the DAG folders failed");
      }
    });
    return this.scanning;
  }

  private async scan(): Promise<void> {
    const started = performance.now();
    const signature = await folderSignature(this.options.folders.map((f) => f.dir));
    const force = new Set(this.forced);
    this.forced.clear();
    const broken = new Map<string, string>();
    const bundles: Bundle[] = [];
    /** Each file's folder name: its bundle, as Airflow names it. */
    const bundleOf = new Map<string, string>();
    let files = 0;
    for (const folder of this.options.folders) {
      for (const file of await discoverDagFiles(folder.dir)) {
        files += 1;
        bundleOf.set(filelocOf(file), folder.name);
        try {
          bundles.push(await bundleDagFile(folder.dir, file));
        } catch (err) {
          broken.set(filelocOf(file), err instanceof BundleError ? `SyntaxError: ${err.detail}` : stackOf(err));
        }
      }
    }
    const known = await knownCodeHashes(this.pool, bundles.map((b) => b.hash));
    const parsed: ParsedFile[] = [];
    let isolated = 0;
    for (const bundle of bundles) {
      const file = await bundleFile(bundle.hash, bundle.code);
      const mustParse = force.has(bundle.fileloc) || !(known.has(bundle.hash) || this.parsedOk.has(bundle.hash));
      let ms: number | null = null;
      if (mustParse) {
        const failed = force.has(bundle.fileloc) ? undefined : this.parseFailures.get(bundle.hash);
        if (failed !== undefined) {
          broken.set(bundle.fileloc, failed);
          continue;
        }
        isolated += 1;
        this.parses += 1;
        const outcome = await this.parser.parse(file, bundle.fileloc, bundle.code);
        ms = outcome.ms;
        if (!outcome.ok) {
          if (this.parseFailures.size >= MAX_REMEMBERED_FAILURES) this.parseFailures.clear();
          this.parseFailures.set(bundle.hash, outcome.stack);
          broken.set(bundle.fileloc, outcome.stack);
          continue;
        }
        this.parseFailures.delete(bundle.hash);
        this.parsedOk.add(bundle.hash);
      }
      try {
        const dags = await importBundle(bundle.hash, bundle.code, bundle.fileloc);
        const key = `${bundle.fileloc}@${bundle.hash}`;
        parsed.push({ bundle, dags, reparsed: mustParse || !this.published.has(key), ms });
      } catch (err) {
        broken.set(bundle.fileloc, stackOf(err));
      }
    }
    this.parser.idle(); // the worker stays for the next scan, a minute at most
    const current = await readCurrentDags(this.pool);
    const valid = this.checkSet(parsed, current, broken);
    const dags: PublishedDag[] = valid.flatMap((f) =>
      f.dags.map((dag) => ({
        dag,
        fileloc: f.bundle.fileloc,
        bundleName: bundleOf.get(f.bundle.fileloc),
        code: { hash: f.bundle.hash, source: f.bundle.source, bundle: f.bundle.code },
        parseDurationMs: f.ms,
        reparsed: f.reparsed,
      })),
    );
    const versions = await publishDags(this.pool, { dags, folder: { importErrors: [...broken].map(([filename, stackTrace]) => ({ filename, stackTrace, bundleName: bundleOf.get(filename) })) } });
    for (const f of valid) this.published.add(`${f.bundle.fileloc}@${f.bundle.hash}`);
    this.signature = signature;
    const created = versions.filter((v) => v.created).map((v) => `${v.dagId} v${v.versionNumber}`);
    this.logger.info(
      { files, dags: dags.length, parsedInIsolation: isolated, newVersions: created, importErrors: [...broken.keys()], ms: Math.round(performance.now() - started) },
      created.length > 0 || broken.size > 0 ? "DAG folders parsed" : "DAG folders parsed: nothing new",
    );
  }

  /** The files whose DAGs can be served together; the others join `broken`, each with why. */
  private checkSet(parsed: readonly ParsedFile[], current: readonly CurrentDag[], broken: Map<string, string>): ParsedFile[] {
    // one owner per DAG id: the file that owns it in Postgres keeps it, else the first file by name
    const owner = new Map<string, string>();
    const ownerInDb = new Map(current.filter((c) => !c.isStale).map((c) => [c.dagId, c.fileloc]));
    for (const f of parsed) for (const d of f.dags) if (ownerInDb.get(d.id) === f.bundle.fileloc) owner.set(d.id, f.bundle.fileloc);
    for (const f of parsed) {
      for (const d of f.dags) {
        const first = owner.get(d.id);
        if (first === undefined) owner.set(d.id, f.bundle.fileloc);
        else if (first !== f.bundle.fileloc && !broken.has(f.bundle.fileloc)) {
          broken.set(f.bundle.fileloc, `DagDefinitionError: ${f.bundle.fileloc} declares DAG '${d.id}', which ${first} already declares; a DAG id has one file (rename one of them)\n    at ${f.bundle.fileloc}`);
        }
      }
    }
    let valid = parsed.filter((f) => !broken.has(f.bundle.fileloc));
    // the DAGs of broken files keep their last versions: the set must hold with them
    for (;;) {
      const declared = new Set(valid.flatMap((f) => f.dags.map((d) => d.id)));
      const carried = current
        .filter((c) => !c.isStale && broken.has(c.fileloc) && !declared.has(c.dagId) && this.runner?.registry.has(c.dagId))
        .flatMap((c) => (this.runner ? [this.runner.registry.get(c.dagId)] : []));
      try {
        DagRegistry.check([...valid.flatMap((f) => f.dags), ...carried]);
        return valid;
      } catch (err) {
        if (!(err instanceof DagDefinitionError)) throw err;
        const culprit = valid.find((f) => f.dags.some((d) => d.id === err.dagId));
        if (!culprit) {
          this.logger.error({ err }, "DAG processor: a DAG kept from a broken file no longer fits the set; it is left out until its file loads");
          return valid;
        }
        broken.set(culprit.bundle.fileloc, `${stackOf(err)}\n    at ${culprit.bundle.fileloc}`);
        valid = valid.filter((f) => f !== culprit);
      }
    }
  }

  private applySoon(): Promise<void> {
    if (this.applyQueued) return this.applying;
    this.applyQueued = true;
    this.applying = this.applying.then(async () => {
      this.applyQueued = false;
      if (this.stopped) return;
      try {
        await this.apply();
      } catch (err) {
        this.logger.error({ err: coerceError(err) }, "DAG processor: taking the DAGs from Postgres failed; the runner keeps the ones it has");
      }
    });
    return this.applying;
  }

  private async applyNow(): Promise<void> {
    await this.applySoon();
  }

  /** The runner takes the latest version of every DAG that is not stale. */
  private async apply(): Promise<void> {
    const runner = this.runner;
    if (!runner) return;
    const entries: { dag: Dag; versionId: string }[] = [];
    for (const c of await readCurrentDags(this.pool)) {
      if (c.isStale) continue;
      const known = runner.registry.version(c.versionId);
      if (known) {
        entries.push({ dag: known, versionId: c.versionId });
        continue;
      }
      try {
        const dag = await this.loadVersion(c.versionId);
        if (dag) entries.push({ dag, versionId: c.versionId });
        else this.logger.warn({ dagId: c.dagId, version: c.versionNumber }, "DAG processor: a version without a bundle (a DAG given in code) is not served from the folder");
      } catch (err) {
        this.logger.error({ err: coerceError(err), dagId: c.dagId, version: c.versionNumber }, "DAG processor: a DAG version did not load; the runner keeps the one it has");
        const version = runner.registry.currentVersion(c.dagId);
        if (version && runner.registry.has(c.dagId)) entries.push({ dag: runner.registry.get(c.dagId), versionId: version });
      }
    }
    let kept = entries;
    for (;;) {
      try {
        await runner.applyDags(kept);
        return;
      } catch (err) {
        if (!(err instanceof DagDefinitionError)) throw err;
        this.logger.error({ err }, "DAG processor: a DAG does not fit the set and is left out");
        const next = kept.filter((e) => e.dag.id !== err.dagId);
        if (next.length === kept.length) throw err;
        kept = next;
      }
    }
  }
}
