// The Kafka engine readers the benchmarks compare the loader with: the `ENGINE = Kafka` clause and
// the partition/offset expressions for the server in front of us, from the platform layer's probed
// flags (src/clickhouse/platform.ts). Only the benches (and their tests) read Kafka with ClickHouse.
import { type Platform, quoteString } from "../src/clickhouse/index.ts";

export interface KafkaReaderSpec {
  brokers: string;
  topic: string;
  group: string;
  /**
   * JSONEachRow: one row per message, columns taken by key. WholeMessage: a single String column
   * holding each message as sent (RawBLOB on modern servers; see wholeMessageFormat for 18.16).
   */
  format: "JSONEachRow" | "WholeMessage";
  consumers?: number;
  /** Skip up to N unparsable messages per block; 18.16 has no such setting and stops on the first one. */
  skipBrokenMessages?: number;
  /** A direct SELECT commits the offsets it read: 18.16 always does, modern servers need kafka_commit_on_select. */
  commitOnSelect?: boolean;
}

/**
 * Kafka format settings. A whole-message reader on 18.16 (no RawBLOB) is TabSeparated with one String
 * column and a newline after each message: a JSON message without raw tabs arrives whole, but TSV
 * unescaping applies, so `\"` and other backslash sequences come out unescaped (orders carry none).
 */
function kafkaFormatSettings(format: KafkaReaderSpec["format"], supportsRawBlob: boolean): string[] {
  if (format === "JSONEachRow") return [`kafka_format = 'JSONEachRow'`];
  if (supportsRawBlob) return [`kafka_format = 'RawBLOB'`];
  return [`kafka_format = 'TabSeparated'`, `kafka_row_delimiter = '\\n'`];
}

/** `ENGINE = Kafka SETTINGS …` for this server (optional settings it does not know are left out). */
export function kafkaEngineClause(platform: Platform, spec: KafkaReaderSpec): string {
  const settings = [
    `kafka_broker_list = ${quoteString(spec.brokers)}`,
    `kafka_topic_list = ${quoteString(spec.topic)}`,
    `kafka_group_name = ${quoteString(spec.group)}`,
    ...kafkaFormatSettings(spec.format, platform.supportsRawBlob),
  ];
  if (spec.consumers !== undefined) settings.push(`kafka_num_consumers = ${spec.consumers}`);
  if (spec.skipBrokenMessages !== undefined && platform.kafkaSkipsBrokenMessages) {
    settings.push(`kafka_skip_broken_messages = ${spec.skipBrokenMessages}`);
  }
  if (spec.commitOnSelect === true && platform.kafkaDirectSelectNeedsSetting) settings.push("kafka_commit_on_select = 1");
  return `ENGINE = Kafka SETTINGS ${settings.join(", ")}`;
}

/** A Kafka reader's partition and offset: the virtual columns, or NULL where the server has none. */
export function kafkaPositionExpressions(platform: Platform): { partition: string; offset: string } {
  const none = "CAST(NULL AS Nullable(UInt64))";
  return platform.hasKafkaVirtualColumns ? { partition: "_partition", offset: "_offset" } : { partition: none, offset: none };
}
