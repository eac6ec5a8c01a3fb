// What the loader's log says about its flush cycles: quiet while inserts land; one warning when a
// table's rows are first held (the refusal's class, code and text, and what happens next), a
// reminder every 10 s while they stay held, one line when inserts land again, and every failed
// commit. The same state is on /health and /metrics; the log is where an operator looks first.
import type { CycleReport } from "./loader-core.ts";

export interface CycleLogSink {
  info(line: string): void;
  warn(line: string): void;
}

const REMIND_EVERY_MS = 10_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : typeof err === "string" ? err : JSON.stringify(err);
}

export class CycleLog {
  private heldSince: number | undefined;
  private lastLine = 0;

  constructor(
    private readonly topic: string,
    private readonly log: CycleLogSink,
    private readonly now: () => number = Date.now,
    private readonly suspectAfter = 2,
  ) {}

  /** Takes the report of a cycle that ran, or the error of one that threw (bound: pass it as is). */
  readonly cycle = (report: CycleReport | undefined, thrown?: unknown): void => {
    const now = this.now();
    if (thrown !== undefined) {
      this.log.warn(`${this.topic}: a flush cycle failed: ${message(thrown)}; the next cycle retries`);
      return;
    }
    if (report === undefined || !report.ran) return;
    for (const d of report.nodeDeaths) {
      this.log.warn(
        d.suspect
          ? `${this.topic}: ${d.node} stopped answering after an INSERT of a suspect batch's slice (${d.rows} rows) into ${d.table} lost its connection; the slice is split`
          : `${this.topic}: ${d.node} stopped answering after an INSERT of ${d.rows} rows into ${d.table} lost its connection; the batch is held (salvaged as suspect after ${this.suspectAfter} such deaths in a row)`,
      );
    }
    for (const k of report.killers) {
      this.log.warn(`${this.topic}: ${k.topic}/${k.partition}@${k.offset} kills ${k.node} (its INSERT alone left the node not answering): a dead letter kills_server; the rest of its batch lands`);
    }
    if (report.commitError !== undefined) {
      this.log.warn(`${this.topic}: committing offsets failed (${message(report.commitError)}); the rows are placed, the next cycle commits them or, after a rebalance, they are read and inserted again`);
    }
    if (report.heldBy.length > 0) {
      const first = report.heldBy[0];
      const kinds = [...new Set(report.heldBy.map((r) => `${r.kind} ${r.reason}`))].join(", ");
      if (this.heldSince === undefined) {
        this.heldSince = now;
        this.lastLine = now;
        this.log.warn(
          `${this.topic}: ${report.rowsHeld} rows held, their INSERT refused (${kinds}): ${first?.text ?? ""}; ` +
            "their partitions' commits wait and the loader retries with backoff (loader_sink_down on /metrics when every insert failed)",
        );
      } else if (now - this.lastLine >= REMIND_EVERY_MS) {
        this.lastLine = now;
        this.log.warn(`${this.topic}: rows still held after ${((now - this.heldSince) / 1000).toFixed(0)} s (${kinds}), ${report.rowsHeld} in this cycle; retrying`);
      }
      return;
    }
    if (this.heldSince !== undefined && report.rowsLanded > 0) {
      this.log.info(`${this.topic}: inserts land again after ${((now - this.heldSince) / 1000).toFixed(1)} s held (${report.rowsLanded} rows in this cycle)`);
      this.heldSince = undefined;
    }
  };
}
