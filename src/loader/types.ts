// The loader's core words and the shapes every module of src/loader shares.
//
// Glossary
// - message: one Kafka record as the consumer handed it out (topic, partition, offset, key, value).
// - decode mode: how a topic's values are read (decode.ts): "json-object" (each value one JSON
//   object) or "text" (any UTF-8 text).
// - undecodable: a message value its topic's mode refuses (too large, not UTF-8, not JSON, not an
//   object); it goes to the dead-letter table without ever reaching ClickHouse's parsers, with a
//   reason code.
// - target: the router's name for where a row goes (e.g. `ch1:stg.hits_in`); opaque to the core,
//   the RowInserter knows what it means. Buffers, metrics and dead letters call it "table".
// - splice: building a row's JSONEachRow line from the message's own bytes (splice.ts): `{`, the
//   router's leading fields, then the original object's members; nothing is re-serialised.
// - buffer: the rows waiting for one target, flushed by rows, bytes or age (buffers.ts).
// - placed: a message whose row was inserted, or whose dead letter was inserted (or was dropped and
//   counted). Only placed messages may be committed past (offsets.ts).
// - flush cycle: one round of inserts for the buffers that are due plus one dead-letter insert,
//   followed by at most one offset commit (loader-core.ts).
// - held: rows whose insert failed for a reason that is not theirs (transient fault, schema
//   trouble); they stay buffered, block their partitions' commits and are retried with backoff.
// - salvage: splitting a batch the server rejected for data reasons until the bad rows are alone
//   (salvage.ts).
// - sink-down gate: open while every insert of the last flush cycle failed transiently
//   (sink-gate.ts); while open, cycles wait for a jittered backoff.

/** A topic-partition, the unit offsets are tracked and committed by. */
export interface TopicPartition {
  topic: string;
  partition: number;
}

/** One Kafka record as the consumer handed it out. Offsets are bigint: Kafka's are int64. */
export interface LoaderMessage extends TopicPartition {
  offset: bigint;
  key: Buffer | null;
  /** null for a tombstone. */
  value: Buffer | null;
  /** The record's Kafka headers, name → value as sent (the last one when a name repeats); absent
   * when it has none. Headers without a value are left out (headers.ts normaliseHeaders). */
  headers?: ReadonlyMap<string, Buffer>;
}

/** Where a row came from, kept with it until it is placed (enough to write its dead letter). */
export interface MessageSource extends TopicPartition {
  offset: bigint;
  key: Buffer | null;
  /** The message value, at most `rawCapBytes` of it. */
  raw: Buffer;
  /** The value's full length in bytes (raw may be shorter). */
  rawBytes: number;
}

/** Where rows land: a table (`db.table`, quoted as it goes into SQL) on one ClickHouse node. */
export interface LoaderTarget {
  readonly node: string;
  readonly table: string;
}

/** `node:table`: a target's name in buffers, metrics labels and dead letters' target_table. */
export function targetName(target: LoaderTarget): string {
  return `${target.node}:${target.table}`;
}

/** `topic/partition`: the key of per-partition maps. */
export function partitionKey(tp: TopicPartition): string {
  return `${tp.topic}/${tp.partition}`;
}

/** Caps a message value for keeping. A capped value is copied, so a huge message is not kept alive. */
export function messageSource(message: LoaderMessage, rawCapBytes: number): MessageSource {
  const value = message.value ?? Buffer.alloc(0);
  return {
    topic: message.topic,
    partition: message.partition,
    offset: message.offset,
    key: message.key,
    raw: value.length > rawCapBytes ? Buffer.from(value.subarray(0, rawCapBytes)) : value,
    rawBytes: value.length,
  };
}
