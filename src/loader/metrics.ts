// The loader's Prometheus metrics, registered in a registry the caller owns (the runner's /metrics
// route, or a test's own registry), so two loaders or two tests never collide in a global one.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export class LoaderMetrics {
  readonly rowsPlaced: Counter<"table">;
  readonly bytesPlaced: Counter<"table">;
  readonly deadLetters: Counter<"reason">;
  readonly deadLettersDropped: Counter<"reason">;
  readonly revokeDiscarded: Counter<"stage">;
  readonly insertFailures: Counter<"kind">;
  readonly flushSeconds: Histogram;
  readonly sinkDown: Gauge;
  readonly heldRows: Gauge;
  readonly commitOffset: Gauge<"topic" | "partition">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.rowsPlaced = new Counter({ name: "loader_rows_placed_total", help: "Rows inserted into their table", labelNames: ["table"], registers });
    this.bytesPlaced = new Counter({ name: "loader_bytes_placed_total", help: "JSONEachRow bytes of the rows inserted", labelNames: ["table"], registers });
    this.deadLetters = new Counter({ name: "loader_dead_letters_total", help: "Messages written to the dead-letter table, by reason", labelNames: ["reason"], registers });
    this.deadLettersDropped = new Counter({ name: "loader_dead_letters_dropped_total", help: "Dead letters the dead-letter table refused for their data and that were dropped, by reason", labelNames: ["reason"], registers });
    this.revokeDiscarded = new Counter({ name: "loader_revoke_discarded_total", help: "Rows of revoked partitions discarded before any write", labelNames: ["stage"], registers });
    this.insertFailures = new Counter({ name: "loader_insert_failures_total", help: "Failed INSERTs by classification", labelNames: ["kind"], registers });
    this.flushSeconds = new Histogram({ name: "loader_flush_seconds", help: "Duration of a flush cycle", buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers });
    this.sinkDown = new Gauge({ name: "loader_sink_down", help: "1 while every insert of the last flush cycle failed transiently (commits held, retrying with backoff)", registers });
    this.heldRows = new Gauge({ name: "loader_held_rows", help: "Rows handed out and not placed yet", registers });
    this.commitOffset = new Gauge({ name: "loader_committed_offset", help: "Last offset committed, per partition", labelNames: ["topic", "partition"], registers });
  }
}
