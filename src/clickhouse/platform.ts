// The platform layer: what the ClickHouse server in front of us can do, and the SQL fragments that
// differ between the stand's 18.16 and a modern server. Every server-dependent fragment is rendered
// here, so DDL and ETL code states intent ("a Kafka reader", "sync distributed insert") once.
// 18.16 values were probed on the stand (docs/stand.md); the other thresholds are the first upstream
// release with the feature as far as the changelogs tell, not tested here (no other server on hand). platformForVersion() renders without a server, for tests and reviews.
import type { StandClickHouse } from "./client.ts";
import { quoteString } from "./sql.ts";

export interface KafkaReaderSpec {
  brokers: string;
  topic: string;
  group: string;
  format: "JSONEachRow";
  consumers?: number;
  /** Skip up to N unparsable messages per block; 18.16 has no such setting and stops on the first one. */
  skipBrokenMessages?: number;
}

export interface Platform {
  version: string;
  major: number;
  minor: number;
  /** CREATE USER/ROLE, GRANT (20.4+); without them accounts live only in users.xml. */
  hasSqlRoles: boolean;
  /** JSONExtract* (19.7+); 18.16 has only visitParamExtract*. */
  hasJsonFunctions: boolean;
  /** DateTime64 (20.1+). */
  hasDateTime64: boolean;
  /** RawBLOB input format for whole-message readers (21.1+). */
  supportsRawBlob: boolean;
  /** CREATE DICTIONARY (19.17+); 18.16 dictionaries are XML files only. */
  hasSqlDictionaries: boolean;
  /** Kafka engine setting kafka_skip_broken_messages (19.x+). */
  kafkaSkipsBrokenMessages: boolean;
  /** Name of the "INSERT into Distributed waits for the shards" setting. */
  distributedSyncInsertSetting: "insert_distributed_sync" | "distributed_foreground_insert";
  /** Settings a session needs before using LowCardinality (18.16 marks it experimental). */
  lowCardinalitySettings: Readonly<Record<string, 1>>;
  /** `ENGINE = Kafka SETTINGS …` for this server (unsupported optional settings are left out). */
  kafkaEngine(spec: KafkaReaderSpec): string;
  /** A String field of a JSON text column: JSONExtractString or visitParamExtractString. */
  jsonExtractString(column: string, key: string): string;
  /** Settings for an INSERT into a Distributed table that must reach the shards before it returns. */
  syncDistributedInsertSettings(): Readonly<Record<string, 1>>;
}

function atLeast(major: number, minor: number, wantMajor: number, wantMinor: number): boolean {
  return major > wantMajor || (major === wantMajor && minor >= wantMinor);
}

/** The platform of a server reporting `version` (e.g. "18.16.1", "24.8.4.13"). */
export function platformForVersion(version: string): Platform {
  const match = /^(\d+)\.(\d+)/.exec(version.trim());
  if (!match?.[1] || !match[2]) throw new Error(`not a ClickHouse version string: '${version}'`);
  const major = Number(match[1]);
  const minor = Number(match[2]);
  const is = (m: number, n: number): boolean => atLeast(major, minor, m, n);
  const hasJsonFunctions = is(19, 7);
  const kafkaSkipsBrokenMessages = is(19, 1);
  const lowCardinalitySettings: Record<string, 1> = is(19, 1) ? {} : { allow_experimental_low_cardinality_type: 1 };
  const distributedSyncInsertSetting = is(23, 11) ? "distributed_foreground_insert" : "insert_distributed_sync";
  return Object.freeze({
    version: version.trim(),
    major,
    minor,
    hasSqlRoles: is(20, 4),
    hasJsonFunctions,
    hasDateTime64: is(20, 1),
    supportsRawBlob: is(21, 1),
    hasSqlDictionaries: is(19, 17),
    kafkaSkipsBrokenMessages,
    distributedSyncInsertSetting,
    lowCardinalitySettings: Object.freeze(lowCardinalitySettings),
    kafkaEngine(spec: KafkaReaderSpec): string {
      const settings = [
        `kafka_broker_list = ${quoteString(spec.brokers)}`,
        `kafka_topic_list = ${quoteString(spec.topic)}`,
        `kafka_group_name = ${quoteString(spec.group)}`,
        `kafka_format = ${quoteString(spec.format)}`,
      ];
      if (spec.consumers !== undefined) settings.push(`kafka_num_consumers = ${spec.consumers}`);
      if (spec.skipBrokenMessages !== undefined && kafkaSkipsBrokenMessages) {
        settings.push(`kafka_skip_broken_messages = ${spec.skipBrokenMessages}`);
      }
      return `ENGINE = Kafka SETTINGS ${settings.join(", ")}`;
    },
    jsonExtractString(column: string, key: string): string {
      return hasJsonFunctions ? `JSONExtractString(${column}, ${quoteString(key)})` : `visitParamExtractString(${column}, ${quoteString(key)})`;
    },
    syncDistributedInsertSettings(): Readonly<Record<string, 1>> {
      return { [distributedSyncInsertSetting]: 1 };
    },
  });
}

/** Asks the server its version and returns its platform. */
export async function detectPlatform(clickhouse: StandClickHouse): Promise<Platform> {
  const rows = await clickhouse.query<{ v: string }>("SELECT version() AS v");
  const version = rows[0]?.v;
  if (!version) throw new Error(`ClickHouse node ${clickhouse.target.node} returned no version()`);
  return platformForVersion(version);
}
