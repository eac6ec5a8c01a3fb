// The loader's core, without Kafka: messages are accepted (checked, routed, spliced into a
// JSONEachRow line from their own bytes, buffered, tracked),
// flush cycles insert the due buffers with salvage, write the cycle's dead letters in one INSERT,
// then commit once, per partition below the lowest offset not placed. Cycles and revocations take
// turns (one lock), so a revoked partition's rows are dropped between cycles, never mid-write.
// A table whose flush was held waits for its own backoff (table-backoff.ts) while others flow.
// A batch whose INSERTs leave its node gone is salvaged as suspect, in its node's turn (node-deaths.ts).
import { batchHead, BufferManager, type BufferedRow } from "./buffers.ts";
import type { RowInserter } from "./clickhouse-sink.ts";
import type { LoaderConfig } from "../config/index.ts";
import type { DeadLetter, DeadLetterSink } from "./dead-letters.ts";
import { decodeMessageValue, type DecodeMode } from "./decode.ts";
import type { LoaderMetrics } from "./metrics.ts";
import type { LoaderPausePoint } from "./pause-points.ts";
import { OffsetTracker, type CommitPoint } from "./offsets.ts";
import { NodeDeathWatch, SuspectTurns, type NodeDeath } from "./node-deaths.ts";
import { classifyRejection, lostConnection, type Rejection } from "./rejections.ts";
import { BUDGET_SPENT, insertWithSalvage, StaleRows, type SalvageOptions, type SalvageOutcome, type SliceSender } from "./salvage.ts";
import { SinkGate, type CycleVerdict, type SinkGateState } from "./sink-gate.ts";
import { SpliceLineWriter, type LeadingFields, type SpliceRouter } from "./splice.ts";
import type { RowDoc } from "./row-binary.ts";
import { plainTableName, TablePlans, type TablePlan } from "./table-schema.ts";
import { CH_ERROR } from "../clickhouse/index.ts";
import { TableBackoffs, type TableBackoffState } from "./table-backoff.ts";
import { messageSource, partitionKey, targetName, type LoaderMessage, type LoaderTarget, type TopicPartition } from "./types.ts";

export type { DecodeMode } from "./decode.ts";
export type { NodeDeath } from "./node-deaths.ts";
export type { LeadingFields, LeadingFieldValue, SpliceRoute, SpliceRouter } from "./splice.ts";

export interface LoaderCoreDeps {
  config: LoaderConfig;
  inserter: RowInserter;
  deadLetters: DeadLetterSink;
  /** Commits offsets (the consumer's commitOffsets); called at most once per cycle. */
  commit: (points: readonly CommitPoint[]) => Promise<void>;
  /** How this topic's values are read: one JSON object each, or any UTF-8 text (decode.ts). */
  decodeMode: DecodeMode;
  /** Picks each message's target and leading fields (splice.ts). */
  route: SpliceRouter;
  metrics?: LoaderMetrics;
  /** Pause points (the test stand only, pause-points.ts): awaited before a cycle's first INSERT
   * and before its commit; resolves at once when none is armed. */
  pause?: (point: LoaderPausePoint, detail: string) => Promise<void>;
  /** The per-node suspect turn, one for every core of the process (node-deaths.ts): the service's
   * hits and orders cores both write to the first node. A core given none has its own. */
  suspectTurns?: SuspectTurns;
  now?: () => number;
  random?: () => number;
  /** Told each new insert plan of a table (its first flush, a column change, a reload): the log says it. */
  onPlan?: (plan: TablePlan) => void;
}

/**
 * Code 252 is TOO_MANY_PARTS (the server merges too slowly: transient) and also "Too many
 * partitions for single INSERT block" (the batch spans more partitions than
 * max_partitions_per_insert_block: the batch's own doing, so holding it would hold for ever). The
 * rule is to classify by code only, never by the text, so both are held as transient; but when a
 * table's batch with the same first row has been held by 252 `tooManyPartsSplitAfter` times in a
 * row, its next flush splits it in halves, down to single rows if need be: small enough pieces
 * land, and a genuine TOO_MANY_PARTS just holds again after about log2(rows) quick failures.
 */
const SPLIT_AFTER_REPEATS_CODES: ReadonlySet<number> = new Set([252]);

/** What a row's leading fields count for against flush.maxBytes (a topic, a partition, an offset). */
const FIELDS_SIZE = 64;
/** Encodings of a batch in one flush: its table's columns may change this many times under it. */
const MAX_ENCODE_ROUNDS = 3;

/** A batch held by a split code: which first row, how many holds in a row. */
interface RepeatedHold {
  head: string;
  holds: number;
}

export interface LoaderCoreStatus {
  /** Messages handed out and not placed (buffered, held, or waiting as dead letters). */
  unplaced: number;
  bufferedRows: number;
  bufferedBytes: number;
  /** Buffered rows of tables whose last flush was held (they wait for their table's backoff). */
  heldRows: number;
  pendingDeadLetters: number;
  gate: SinkGateState;
  /** Tables whose last flush was held, with their backoff. */
  heldTables: TableBackoffState[];
  nextDueAt: number | undefined;
}

export interface CycleReport {
  ran: boolean;
  /** Node deaths of this cycle; a suspect batch's killer rows are among the dead letters (`kills_server`). */
  nodeDeaths: NodeDeath[];
  killers: { node: string; table: string; topic: string; partition: number; offset: bigint }[];
  tables: number;
  rowsLanded: number;
  deadLettersWritten: number;
  deadLettersDropped: number;
  rowsHeld: number;
  heldBy: Rejection[];
  committed: CommitPoint[];
  commitError: unknown;
  gate: SinkGateState;
}

export class LoaderCore {
  private readonly buffers: BufferManager;
  private readonly offsets = new OffsetTracker();
  private readonly gate: SinkGate;
  private readonly backoffs: TableBackoffs;
  private readonly repeatedHolds = new Map<string, RepeatedHold>();
  private readonly deaths: NodeDeathWatch;
  private pendingDeadLetters: DeadLetter[] = [];
  private lock: Promise<unknown> = Promise.resolve();
  private readonly now: () => number;
  private readonly lines = new SpliceLineWriter();
  /** Every target a route named, by its name (the key of buffers, backoffs and metrics). */
  private readonly targets = new Map<string, LoaderTarget>();
  /** Each target's insert plan, from its columns (table-schema.ts). */
  private readonly plans: TablePlans;
  /** The default table's plans (its rows are the message as text and the fields; no capture mode). */
  private readonly defaultPlans: TablePlans;

  /** The options in force: the deps' at first, a hot reload's after reconfigure. */
  private config: LoaderConfig;

  constructor(private readonly deps: LoaderCoreDeps) {
    this.config = deps.config;
    this.buffers = new BufferManager(deps.config.flush);
    this.gate = new SinkGate(deps.config.backoff, deps.metrics?.sinkDown, deps.random);
    this.backoffs = new TableBackoffs(deps.config.backoff, deps.random);
    this.now = deps.now ?? Date.now;
    const { inserter } = deps;
    const reader = inserter.readColumns === undefined || inserter.insertRowBinary === undefined ? undefined : inserter.readColumns.bind(inserter);
    this.plans = new TablePlans(reader, deps.decodeMode, inserter.skipsUnknownFields === true, deps.onPlan);
    this.defaultPlans = new TablePlans(reader, "text", inserter.skipsUnknownFields === true, deps.onPlan);
    this.deaths = new NodeDeathWatch({ killsServer: deps.config.killsServer, inserter: deps.inserter, metrics: deps.metrics, now: this.now, turns: deps.suspectTurns ?? new SuspectTurns() });
  }

  /** Takes one message: a row into its table's buffer, or a dead letter for the next cycle. */
  accept(message: LoaderMessage): void {
    const { config } = this;
    this.offsets.handOut(message, message.offset);
    const decoded = decodeMessageValue(message.value, this.deps.decodeMode, config);
    if (!decoded.ok) {
      const source = messageSource(message, config.rawCapBytes);
      this.pendingDeadLetters.push({ source, reason: decoded.reason, errorCode: undefined, errorText: decoded.detail, targetTable: "", deadAt: new Date(this.now()) });
      return;
    }
    const route = this.deps.route(message, decoded.text);
    // (a decoded value is never null: a tombstone is undecodable)
    if (route === null || message.value === null) {
      this.offsets.markPlaced(message, message.offset);
      return;
    }
    const table = targetName(route.target);
    if (!this.targets.has(table)) this.targets.set(table, route.target);
    const doc: RowDoc = { value: message.value, text: decoded.text, members: decoded.members, fields: route.fields };
    this.buffers.add(table, { source: messageSource(message, config.rawCapBytes), doc, size: message.value.length + FIELDS_SIZE }, this.now());
  }

  /**
   * Options from a hot reload, in force from the next message and cycle on: flush limits, size and
   * shape limits, capture modes. Buffered rows stay as they were encoded (a changed capture mode
   * applies to rows read from now on). Backoff and kills-server options keep their start values.
   */
  reconfigure(config: LoaderConfig): void {
    this.config = config;
    this.buffers.setLimits(config.flush);
  }

  /** Whether a cycle has work now: a buffer reached a limit or its age (and its table is not
   * backing off), or dead letters wait. */
  isDue(): boolean {
    const now = this.now();
    return this.gate.mayRun(now) && (this.pendingDeadLetters.length > 0 || this.dueTables(now, false, false).length > 0);
  }

  /** The earliest time a backoff (the gate's or a held table's) ends, past or future; undefined
   * when none is pending. A drain that made no progress sleeps until then. */
  nextRetryAt(): number | undefined {
    const gate = this.gate.snapshot().retryAt;
    const table = this.backoffs.nextRetryAt();
    if (table === undefined) return gate > 0 ? gate : undefined;
    return gate > 0 ? Math.min(gate, table) : table;
  }

  /** Runs one flush cycle (every non-empty buffer when `all`); waits for its turn with revocations. */
  runCycle(options: { all?: boolean; ignoreBackoff?: boolean } = {}): Promise<CycleReport> {
    return this.exclusive(() => this.cycle(options.all ?? false, options.ignoreBackoff ?? false));
  }

  /** Drops everything of partitions a rebalance took away; returns how many rows and letters went. */
  revoke(tps: readonly TopicPartition[]): Promise<number> {
    return this.exclusive(() => {
      const revoked = new Set(tps.map(partitionKey));
      const rows = this.buffers.discardPartitions(tps);
      const letters = this.pendingDeadLetters.length;
      this.pendingDeadLetters = this.pendingDeadLetters.filter((l) => !revoked.has(partitionKey(l.source)));
      this.offsets.revoke(tps);
      this.deps.metrics?.revokeDiscarded.inc({ stage: "buffer" }, rows);
      this.deps.metrics?.revokeDiscarded.inc({ stage: "dead_letter" }, letters - this.pendingDeadLetters.length);
      this.deps.metrics?.heldRows.set(this.offsets.unplacedCount());
      return Promise.resolve(rows + letters - this.pendingDeadLetters.length);
    });
  }

  /** Messages handed out and not placed; buffered and held rows; dead letters waiting; backoffs. */
  status(): LoaderCoreStatus {
    const heldTables = this.backoffs.snapshot();
    return {
      unplaced: this.offsets.unplacedCount(),
      bufferedRows: this.buffers.rowCount(),
      bufferedBytes: this.buffers.byteCount(),
      heldRows: heldTables.reduce((sum, t) => sum + this.buffers.rowCount(t.table), 0),
      pendingDeadLetters: this.pendingDeadLetters.length,
      gate: this.gate.snapshot(),
      heldTables,
      nextDueAt: this.buffers.nextDueAt(),
    };
  }

  /** The offset safe to commit on a partition (tests and lag reporting). */
  safeOffset(tp: TopicPartition): bigint | undefined {
    return this.offsets.safeOffset(tp);
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.lock.then(work, work);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async cycle(all: boolean, ignoreBackoff: boolean): Promise<CycleReport> {
    const started = this.now();
    const report: CycleReport = { ran: false, nodeDeaths: [], killers: [], tables: 0, rowsLanded: 0, deadLettersWritten: 0, deadLettersDropped: 0, rowsHeld: 0, heldBy: [], committed: [], commitError: undefined, gate: this.gate.snapshot() };
    if (!ignoreBackoff && !this.gate.mayRun(started)) return report;
    report.ran = true;
    const verdict: CycleVerdict = { succeeded: 0, failedTransient: 0, failedOther: 0 };
    const tables = this.dueTables(started, all, ignoreBackoff);
    report.tables = tables.length;
    if (tables.length > 0 && this.deps.pause) {
      await this.deps.pause("before_insert", `${tables.map((t) => `${t}: ${this.buffers.rowCount(t)} rows`).join(", ")}; ${this.pendingDeadLetters.length} dead letters waiting`);
    }
    const held = new Map<string, Rejection>();
    // Tables flush side by side (the hits landings of two nodes are two servers): each table's
    // buffer, offsets and backoff are its own, and the shared counters only add up.
    await Promise.all(
      tables.map(async (table) => {
        const heldBy = await this.flushTable(table, started, verdict, report);
        if (heldBy === undefined) this.backoffs.recordSuccess(table);
        else if (heldBy !== BUDGET_SPENT) held.set(table, heldBy);
      }),
    );
    await this.writeDeadLetters(verdict, report);
    report.gate = this.gate.record(verdict, this.now());
    for (const [table, heldBy] of held) this.backoffs.recordHeld(table, heldBy, this.now());
    if ((report.rowsLanded > 0 || report.deadLettersWritten > 0) && this.deps.pause) {
      const points = this.offsets.pendingCommits().map((p) => `p${p.partition}=${p.offset}`);
      await this.deps.pause("before_commit", `${report.rowsLanded} rows and ${report.deadLettersWritten} dead letters placed; would commit ${points.join(" ") || "nothing"}`);
    }
    await this.commitPlaced(report);
    this.deps.metrics?.heldRows.set(this.offsets.unplacedCount());
    this.deps.metrics?.flushSeconds.observe((this.now() - started) / 1000);
    return report;
  }

  private dueTables(now: number, all: boolean, ignoreBackoff: boolean): string[] {
    const due = this.buffers.dueTables(now, all);
    return ignoreBackoff ? due : due.filter((table) => this.backoffs.mayRun(table, now));
  }

  /** Flushes a due table's whole buffer, batch by batch, until it is empty or a batch is held;
   * returns why it was held, if it was. */
  private async flushTable(table: string, started: number, verdict: CycleVerdict, report: CycleReport): Promise<Rejection | undefined> {
    const flushStarted = this.now();
    let heldBy: Rejection | undefined;
    // Only the rows buffered when the cycle began: rows read meanwhile wait for the next cycle, so a
    // backlog is committed cycle by cycle instead of once at its very end.
    let left = this.buffers.rowCount(table);
    while (left > 0) {
      const batch = this.buffers.take(table, left);
      if (batch.length === 0) break;
      left -= batch.length;
      heldBy = await this.flushBatch(table, batch, started, verdict, report);
      if (heldBy !== undefined) break;
    }
    this.deps.metrics?.tableFlushSeconds.observe({ table }, (this.now() - flushStarted) / 1000);
    return heldBy;
  }

  /** Inserts one batch with salvage; returns why some of it was held (it went back to the buffer). */
  private async flushBatch(table: string, batch: BufferedRow[], started: number, verdict: CycleVerdict, report: CycleReport): Promise<Rejection | undefined> {
    const { config } = this;
    const { metrics } = this.deps;
    const head = batchHead(batch);
    const repeated = this.repeatedHolds.get(table);
    const split = repeated !== undefined && repeated.head === head && repeated.holds >= config.tooManyPartsSplitAfter;
    const target = this.targets.get(table);
    if (target === undefined) throw new Error(`loader: buffered rows for '${table}', a target no route named`);
    const suspect = this.deaths.isSuspect(table, head);
    const salvage = () =>
      this.insertBatch(table, target, batch, {
        insertBudget: config.salvageInsertBudget,
        errorTextCapBytes: config.errorTextCapBytes,
        splitOnCodes: split ? SPLIT_AFTER_REPEATS_CODES : undefined,
        suspect: suspect ? this.deaths.suspectSalvage(table, target, batch.length, report.nodeDeaths) : undefined,
      });
    const outcome = suspect ? await this.deaths.inSuspectTurn(target.node, salvage) : await salvage();
    await this.toDefaultTable(table, target, outcome);
    this.countRepeatedHold(table, head, split, outcome.held[0] === batch[0] ? outcome.heldBy : undefined);
    await this.deaths.countDeaths(table, target, suspect, batch, outcome.held, outcome.heldBy, report.nodeDeaths);
    verdict.succeeded += outcome.inserts - outcome.failures.length;
    for (const failure of outcome.failures) {
      metrics?.insertFailures.inc({ kind: failure.kind });
      if (failure.kind === "transient" || failure.kind === "unknown") verdict.failedTransient++;
      else if (failure.kind !== "data") verdict.failedOther++;
    }
    this.placeRows(table, outcome.landed);
    report.rowsLanded += outcome.landed.length;
    for (const { row, rejection } of outcome.rejected) {
      if (rejection.reason === "kills_server") report.killers.push({ node: target.node, table, topic: row.source.topic, partition: row.source.partition, offset: row.source.offset });
      this.pendingDeadLetters.push({ source: row.source, reason: rejection.reason, errorCode: rejection.code, errorText: rejection.text, targetTable: table, deadAt: new Date(this.now()) });
    }
    if (outcome.held.length === 0) return undefined;
    this.buffers.putBack(table, outcome.held, started);
    report.rowsHeld += outcome.held.length;
    const heldBy = outcome.heldBy ?? BUDGET_SPENT;
    report.heldBy.push(heldBy);
    return heldBy;
  }

  /**
   * Inserts a batch as its table's plan says (table-schema.ts): the rows the encoder writes as one
   * RowBinary INSERT, the rest as one JSONEachRow INSERT, each with salvage. The columns are read
   * first; rows a changed table made stale are encoded again and sent in the same flush.
   */
  private async insertBatch(table: string, target: LoaderTarget, batch: readonly BufferedRow[], options: SalvageOptions): Promise<SalvageOutcome> {
    const total: SalvageOutcome = { landed: [], rejected: [], held: [], heldBy: undefined, inserts: 0, failures: [], kills: 0, stale: [] };
    let rows: readonly BufferedRow[] = batch;
    for (let round = 0; rows.length > 0; round++) {
      let plan: TablePlan;
      try {
        if (round >= MAX_ENCODE_ROUNDS) throw new Error(`${table}: its columns changed ${MAX_ENCODE_ROUNDS} times during one flush; the rows wait for the next`);
        plan = await this.plans.refresh(table, target, this.config).catch((err: unknown) => {
          // the node does not answer the read (it may be restarting: a suspect salvage waits for it
          // before its first INSERT): the last plan serves, and a changed table still shows as a refusal
          const last = this.plans.current(table);
          if (last === undefined) throw err;
          return last;
        });
      } catch (err) {
        // the columns could not be read: no INSERT was sent, so a lost connection here is no
        // death of the batch (node-deaths.ts counts only INSERTs that lost theirs)
        const read = classifyRejection(err, this.config.errorTextCapBytes);
        const rejection: Rejection = lostConnection(read) ? { ...read, reason: `columns_read_${read.reason}`, text: `reading ${table}'s columns: ${read.text}` } : read;
        total.inserts++;
        total.failures.push(rejection);
        total.heldBy ??= rejection;
        total.held.push(...rows);
        break;
      }
      const stale: BufferedRow[] = [];
      for (const part of this.encodeRows(table, target, plan, rows)) {
        if (total.heldBy !== undefined) {
          total.held.push(...part.rows);
          continue;
        }
        const outcome = await insertWithSalvage(part.send, part.rows, { ...options, insertBudget: options.insertBudget - total.inserts });
        total.landed.push(...outcome.landed);
        total.rejected.push(...outcome.rejected);
        total.held.push(...outcome.held);
        total.heldBy ??= outcome.heldBy;
        total.inserts += outcome.inserts;
        total.failures.push(...outcome.failures);
        total.kills += outcome.kills;
        stale.push(...outcome.stale);
      }
      rows = stale;
    }
    if (total.held.length > 1) {
      // back to the buffer in the batch's order (a batch is known again by its first row)
      const order = new Map(batch.map((row, i) => [row, i]));
      total.held.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
    }
    return total;
  }

  /**
   * Rows held because ClickHouse reported their table (or its database) absent go to the default
   * table on the same node (loader.options.defaultTable), the original target kept in
   * _target_table and the message in _raw; landed there, they are placed. A failure there leaves
   * them held as they were.
   */
  private async toDefaultTable(table: string, target: LoaderTarget, outcome: SalvageOutcome): Promise<void> {
    const defaultTable = this.config.defaultTable;
    const code = outcome.heldBy?.code;
    if (defaultTable === undefined || outcome.held.length === 0 || (code !== CH_ERROR.UNKNOWN_TABLE && code !== CH_ERROR.UNKNOWN_DATABASE)) return;
    if (plainTableName(target.table) === defaultTable) return;
    const fallback: LoaderTarget = { node: target.node, table: defaultTable };
    const key = targetName(fallback);
    const intended = plainTableName(target.table);
    const rows = outcome.held.map((row): BufferedRow => ({
      source: row.source,
      size: row.size,
      doc: {
        value: row.doc.value,
        text: row.doc.text,
        members: undefined,
        fields: { _target_table: intended, _raw: row.doc.text, kafka_topic: row.source.topic, kafka_partition: row.source.partition, kafka_offset: row.source.offset },
      },
    }));
    let plan: TablePlan;
    try {
      plan = await this.defaultPlans.refresh(key, fallback, this.config);
    } catch {
      return; // the default table cannot be read either: the rows stay held by their own table's fault
    }
    const sent = await insertWithSalvage(
      async (slice) => {
        for (const part of this.encodeRows(key, fallback, plan, slice)) await part.send(part.rows);
      },
      rows,
      { insertBudget: 1, errorTextCapBytes: this.config.errorTextCapBytes },
    );
    if (sent.landed.length !== rows.length) return;
    this.deps.metrics?.rowsDefaulted.inc({ table, default_table: defaultTable }, rows.length);
    outcome.landed.push(...outcome.held);
    outcome.held = [];
    outcome.heldBy = undefined;
  }

  /** The batch's parts under `plan`: RowBinary rows first, then the rows that go JSONEachRow. */
  private encodeRows(table: string, target: LoaderTarget, plan: TablePlan, rows: readonly BufferedRow[]): { rows: BufferedRow[]; send: SliceSender }[] {
    const { inserter } = this.deps;
    const json: BufferedRow[] = [];
    const binary: BufferedRow[] = [];
    const encoder = plan.encoder;
    if (encoder === undefined) json.push(...rows);
    else {
      for (const row of rows) {
        if (row.binaryVersion !== plan.version) {
          row.binary = encoder.encode(row.doc);
          row.binaryVersion = plan.version;
        }
        (row.binary === undefined ? json : binary).push(row);
      }
    }
    this.deps.metrics?.rowsEncoded.inc({ table, format: "row_binary" }, binary.length);
    this.deps.metrics?.rowsEncoded.inc({ table, format: "json_each_row" }, json.length);
    const parts: { rows: BufferedRow[]; send: SliceSender }[] = [];
    if (binary.length > 0) {
      parts.push({
        rows: binary,
        send: async (slice) => {
          try {
            if (inserter.insertRowBinary === undefined) throw new Error(`${table}: the inserter sends no RowBinary`);
            await inserter.insertRowBinary(target, plan.columnList, slice.map((row) => row.binary ?? Buffer.alloc(0)));
          } catch (err) {
            // the rows' own refusal only if the table is as it was when they were encoded
            const kind = classifyRejection(err).kind;
            if ((kind === "data" || kind === "schema") && (await this.plans.refresh(table, target, this.config)).version !== plan.version) throw new StaleRows(table, err);
            throw err;
          }
        },
      });
    }
    if (json.length > 0) {
      parts.push({ rows: json, send: (slice) => inserter.insertLines(target, slice.map((row) => this.lineOf(table, row, plan.droppedFields))) });
    }
    return parts;
  }

  /** A row's JSONEachRow line, built once (without the leading fields the capture mode drops). */
  private lineOf(table: string, row: BufferedRow, dropped: ReadonlySet<string>): Buffer {
    if (row.line !== undefined) return row.line;
    const { doc } = row;
    let fields: LeadingFields = doc.fields;
    if (dropped.size > 0) {
      const kept: Record<string, LeadingFields[string]> = {};
      for (const name in doc.fields) if (!dropped.has(name)) kept[name] = doc.fields[name] as LeadingFields[string];
      fields = kept;
    }
    row.line = this.lines.line(table, doc.value, doc.text, doc.members, fields);
    return row.line;
  }

  /** Counts holds in a row by a split code of batches with the same first row; a split attempt
   * starts the count again, so a genuine TOO_MANY_PARTS is retried whole between split attempts. */
  private countRepeatedHold(table: string, head: string, split: boolean, wholeBatchHeldBy: Rejection | undefined): void {
    const code = wholeBatchHeldBy?.code;
    if (split || code === undefined || !SPLIT_AFTER_REPEATS_CODES.has(code)) {
      this.repeatedHolds.delete(table);
      return;
    }
    const previous = this.repeatedHolds.get(table);
    this.repeatedHolds.set(table, { head, holds: previous?.head === head ? previous.holds + 1 : 1 });
  }

  private placeRows(table: string, rows: readonly BufferedRow[]): void {
    let bytes = 0;
    for (const row of rows) {
      this.offsets.markPlaced(row.source, row.source.offset);
      bytes += row.size;
    }
    this.deps.metrics?.rowsPlaced.inc({ table }, rows.length);
    this.deps.metrics?.bytesPlaced.inc({ table }, bytes);
  }

  private async writeDeadLetters(verdict: CycleVerdict, report: CycleReport): Promise<void> {
    const letters = this.pendingDeadLetters;
    if (letters.length === 0) return;
    this.pendingDeadLetters = [];
    let rejection = await this.tryWriteDeadLetters(letters);
    if (rejection?.kind === "data" && letters.length > 1) {
      // The table refused some letter's data: write them one by one, so only the refused ones drop.
      rejection = undefined;
      for (const letter of letters) {
        const single = await this.tryWriteDeadLetters([letter]);
        if (single?.kind === "data") this.dropDeadLetter(letter, report);
        else if (single === undefined) this.placeDeadLetter(letter, report);
        else {
          rejection = single;
          this.pendingDeadLetters.push(letter);
        }
      }
    } else if (rejection?.kind === "data") {
      for (const letter of letters) this.dropDeadLetter(letter, report);
      rejection = undefined;
    } else if (rejection === undefined) {
      for (const letter of letters) this.placeDeadLetter(letter, report);
    } else {
      this.pendingDeadLetters = [...letters, ...this.pendingDeadLetters];
    }
    if (report.deadLettersWritten > 0) verdict.succeeded++;
    if (rejection !== undefined) {
      if (rejection.kind === "schema") verdict.failedOther++;
      else verdict.failedTransient++;
      report.heldBy.push(rejection);
    }
  }

  private async tryWriteDeadLetters(letters: readonly DeadLetter[]): Promise<Rejection | undefined> {
    try {
      await this.deps.deadLetters.write(letters);
      return undefined;
    } catch (err) {
      const rejection = classifyRejection(err, this.config.errorTextCapBytes);
      this.deps.metrics?.insertFailures.inc({ kind: rejection.kind });
      return rejection;
    }
  }

  private placeDeadLetter(letter: DeadLetter, report: CycleReport): void {
    this.offsets.markPlaced(letter.source, letter.source.offset);
    this.deps.metrics?.deadLetters.inc({ reason: letter.reason });
    report.deadLettersWritten++;
  }

  /** A letter the dead-letter table refused for its own data: no retry can change that, so it is counted and let go. */
  private dropDeadLetter(letter: DeadLetter, report: CycleReport): void {
    this.offsets.markPlaced(letter.source, letter.source.offset);
    this.deps.metrics?.deadLettersDropped.inc({ reason: letter.reason });
    report.deadLettersDropped++;
  }

  private async commitPlaced(report: CycleReport): Promise<void> {
    const points = this.offsets.pendingCommits();
    if (points.length === 0) return;
    try {
      await this.deps.commit(points);
      this.offsets.markCommitted(points);
      report.committed = points;
      for (const p of points) this.deps.metrics?.commitOffset.set({ topic: p.topic, partition: String(p.partition) }, Number(p.offset));
    } catch (err) {
      report.commitError = err;
    }
  }
}
