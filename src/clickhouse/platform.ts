// The platform layer: what the ClickHouse server in front of us can do, and the SQL fragments that
// differ between the stand's 18.16 and a modern server. Every server-dependent fragment is rendered
// here, so DDL and ETL code states intent ("a Kafka reader", "sync distributed insert") once.
// 18.16 values were probed on the stand (docs/stand.md); the other thresholds are the first upstream
// release with the feature as far as the changelogs tell, not tested here (no other server on hand). platformForVersion() renders without a server, for tests and reviews.
import type { StandClickHouse } from "./client.ts";

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
  /**
   * Which name a materialised view must read to receive the rows another view writes: up to 19.x
   * inserts cascade to views of the upstream VIEW (18.16, verified), later ones to views of its
   * TARGET table (ClickHouse issues #2174, #7195, #8048: the switch landed around 19.13/19.14).
   */
  viewChainSource(upstreamView: string, upstreamTarget: string): string;
  /** Kafka virtual columns _partition/_offset (19.11+ as far as the changelogs tell; 18.16 has none). */
  hasKafkaVirtualColumns: boolean;
  /** Table TTL on MergeTree (19.6+). */
  hasTableTtl: boolean;
  /** `DROP … SYNC` (20.5+, with Atomic databases); 18.16 drops synchronously and has no keyword. */
  hasDropSync: boolean;
  /** Direct SELECT from a Kafka table needs stream_like_engine_allow_direct_select (21.12+). */
  kafkaDirectSelectNeedsSetting: boolean;
  /** Settings for an INSERT into a Distributed table that must reach the shards before it returns. */
  syncDistributedInsertSettings(): Readonly<Record<string, 1>>;
  /** Type of a UTC instant with milliseconds; 18.16 has no DateTime64 and keeps whole seconds. */
  instantType: string;
  /** The current instant in instantType. */
  instantNow: string;
  /** `LowCardinality(type)` where it is production-ready (19.1+); the plain type on 18.16, where it is experimental. */
  lowCardinality(type: string): string;
  /** `TTL <expression>` for a MergeTree table, or nothing on a server without table TTL. */
  ttlClause(expression: string): string;
  /** " SYNC" where DROP waits for the data to go (modern Atomic databases), else "". */
  dropSyncClause: string;
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
  const supportsRawBlob = is(21, 1);
  const hasDateTime64 = is(20, 1);
  const hasKafkaVirtualColumns = is(19, 11);
  const hasDropSync = is(20, 5);
  const kafkaDirectSelectNeedsSetting = is(21, 12);
  return Object.freeze({
    version: version.trim(),
    major,
    minor,
    hasSqlRoles: is(20, 4),
    hasJsonFunctions,
    hasDateTime64,
    supportsRawBlob,
    hasSqlDictionaries: is(19, 17),
    kafkaSkipsBrokenMessages,
    distributedSyncInsertSetting,
    lowCardinalitySettings: Object.freeze(lowCardinalitySettings),
    viewChainSource(upstreamView: string, upstreamTarget: string): string {
      return is(19, 13) ? upstreamTarget : upstreamView;
    },
    hasKafkaVirtualColumns,
    hasTableTtl: is(19, 6),
    hasDropSync,
    kafkaDirectSelectNeedsSetting,
    syncDistributedInsertSettings(): Readonly<Record<string, 1>> {
      return { [distributedSyncInsertSetting]: 1 };
    },
    instantType: hasDateTime64 ? "DateTime64(3, 'UTC')" : "DateTime('UTC')",
    instantNow: hasDateTime64 ? "now64(3)" : "now()",
    lowCardinality(type: string): string {
      return is(19, 1) ? `LowCardinality(${type})` : type;
    },
    ttlClause(expression: string): string {
      return is(19, 6) ? `TTL ${expression}` : "";
    },
    dropSyncClause: hasDropSync ? " SYNC" : "",
  });
}

/** Asks the server its version and returns its platform. */
export async function detectPlatform(clickhouse: StandClickHouse): Promise<Platform> {
  const rows = await clickhouse.query<{ v: string }>("SELECT version() AS v");
  const version = rows[0]?.v;
  if (!version) throw new Error(`ClickHouse node ${clickhouse.target.node} returned no version()`);
  return platformForVersion(version);
}
