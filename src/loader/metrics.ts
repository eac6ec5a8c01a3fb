// The loader's Prometheus metrics, registered in a registry the caller owns (the loader service's
// /metrics route, or a test's own registry), so two registries never collide in a global one. The
// cores of one process (hits and orders) share one LoaderMetrics; gauges without a topic label
// (loader_sink_down, loader_held_rows) are then written by whichever core ran its cycle last.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

const FLUSH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class LoaderMetrics {
  readonly rowsPlaced: Counter<"table">;
  readonly bytesPlaced: Counter<"table">;
  /** Rows sent, by table and insert format (row_binary, or json_each_row for the rows the encoder left to the server). */
  readonly rowsEncoded: Counter<"table" | "format">;
  /** Rows of a batch held by an absent table that landed in the default table instead. */
  readonly rowsDefaulted: Counter<"table" | "default_table">;
  readonly deadLetters: Counter<"reason">;
  readonly deadLettersDropped: Counter<"reason">;
  readonly revokeDiscarded: Counter<"stage">;
  readonly insertFailures: Counter<"kind">;
  readonly nodeDeaths: Counter<"node" | "suspect">;
  readonly flushSeconds: Histogram;
  readonly tableFlushSeconds: Histogram<"table">;
  readonly sinkDown: Gauge;
  readonly heldRows: Gauge;
  readonly commitOffset: Gauge<"topic" | "partition">;
  /** Set by the host: a partition's end offset (high watermark), as last read from the broker. */
  readonly endOffset: Gauge<"topic" | "partition">;
  /** Set by the host: end offset minus the group's committed offset. */
  readonly consumerLag: Gauge<"topic" | "partition">;
  /** Set by the host: one series, `{state="<current>"} 1` (reset, then set, on each change). */
  readonly state: Gauge<"state">;
  /** Counted by the host: the consumers restarted because a topic's fetch loop had died (TopicLoader.fetchSilenceMs). */
  readonly consumerRestarts: Counter<"topic">;
  /** Counted by the host: hot reloads of loader.options, by what became of them (reload.ts). */
  readonly configReloads: Counter<"result">;
  /** Set by the host: 1 while the last reload was applied or found nothing to change (and before any), 0 after a refused one. */
  readonly configLastReloadSuccess: Gauge;
  /** Counted by the routers: a declared header whose value is not UTF-8, left out of its row (headers.ts). */
  readonly headerValuesSkipped: Counter<"table" | "header">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.rowsPlaced = new Counter({ name: "loader_rows_placed_total", help: "Rows inserted into their table, by table (the router's target)", labelNames: ["table"], registers });
    this.bytesPlaced = new Counter({ name: "loader_bytes_placed_total", help: "Message bytes (and 64 per row for its leading fields) of the rows inserted, by table", labelNames: ["table"], registers });
    this.rowsEncoded = new Counter({ name: "loader_rows_sent_total", help: "Rows put in an INSERT attempt (a held batch's retries count again; salvage's splits do not), by table and format: row_binary (encoded by the loader from the table's columns) or json_each_row (insert_format json_each_row, or a row whose values the encoder leaves to the server's parser)", labelNames: ["table", "format"], registers });
    this.rowsDefaulted = new Counter({ name: "loader_rows_defaulted_total", help: "Rows held because ClickHouse reported their table absent that landed in the default table (loader.options.defaultTable) instead, by their table and the default table", labelNames: ["table", "default_table"], registers });
    this.deadLetters = new Counter({ name: "loader_dead_letters_total", help: "Messages written to the dead-letter table, by reason", labelNames: ["reason"], registers });
    this.deadLettersDropped = new Counter({ name: "loader_dead_letters_dropped_total", help: "Dead letters the dead-letter table refused for their data and that were dropped, by reason", labelNames: ["reason"], registers });
    this.revokeDiscarded = new Counter({ name: "loader_revoke_discarded_total", help: "Rows (stage=buffer) and dead letters (stage=dead_letter) of revoked partitions discarded before any write", labelNames: ["stage"], registers });
    this.insertFailures = new Counter({ name: "loader_insert_failures_total", help: "Failed INSERTs (rows and dead letters) by classification", labelNames: ["kind"], registers });
    this.nodeDeaths = new Counter({ name: "loader_node_deaths_total", help: "INSERTs that lost their connection and left their node not answering, by node; suspect=true during the salvage of a batch that killed it twice in a row (its killer rows become kills_server dead letters)", labelNames: ["node", "suspect"], registers });
    this.flushSeconds = new Histogram({ name: "loader_flush_seconds", help: "Duration of a flush cycle that ran (inserts, dead letters, commit)", buckets: FLUSH_BUCKETS, registers });
    this.tableFlushSeconds = new Histogram({ name: "loader_table_flush_seconds", help: "Time a flush cycle spent inserting one table's due rows (its batches and their salvage), by table", labelNames: ["table"], buckets: FLUSH_BUCKETS, registers });
    this.sinkDown = new Gauge({ name: "loader_sink_down", help: "1 while every insert of the last flush cycle that tried any failed transiently (commits held, retrying with backoff)", registers });
    this.heldRows = new Gauge({ name: "loader_held_rows", help: "Messages handed to the loader and not placed yet (rows buffered or held, dead letters waiting): their partitions' commits wait for them", registers });
    this.commitOffset = new Gauge({ name: "loader_committed_offset", help: "Offset this loader last committed (the next to read), per partition", labelNames: ["topic", "partition"], registers });
    this.endOffset = new Gauge({ name: "loader_end_offset", help: "A partition's end offset (high watermark: the next offset to be written), as the loader's host last read it", labelNames: ["topic", "partition"], registers });
    this.consumerLag = new Gauge({ name: "loader_consumer_lag", help: "Messages not committed yet: the partition's end offset minus its consumer group's committed offset, as the host last read them", labelNames: ["topic", "partition"], registers });
    this.consumerRestarts = new Counter({ name: "loader_consumer_restarts_total", help: "Times the loader restarted its consumers because a topic's fetch loop was silent for a minute while consuming, by topic", labelNames: ["topic"], registers });
    this.configReloads = new Counter({ name: "loader_config_reloads_total", help: "Hot reloads of loader.options (file change, SIGHUP, POST /reload), by result: applied, refused (the file did not validate: the running options kept), unchanged", labelNames: ["result"], registers });
    for (const result of ["applied", "refused", "unchanged"]) this.configReloads.inc({ result }, 0);
    this.configLastReloadSuccess = new Gauge({ name: "loader_config_last_reload_success", help: "1 when the last hot reload of loader.options was applied or changed nothing (and before any), 0 when it was refused (the running options kept)", registers });
    this.configLastReloadSuccess.set(1);
    this.headerValuesSkipped = new Counter({ name: "loader_header_values_skipped_total", help: "Kafka header values a table declares as a column that were not valid UTF-8: left out of the row (the column takes its default), by table (the router's target) and header", labelNames: ["table", "header"], registers });
    this.state = new Gauge({ name: "loader_state", help: "The loader service's state, as its host last set it: the one series is labelled with the current state and is 1", labelNames: ["state"], registers });
  }
}
