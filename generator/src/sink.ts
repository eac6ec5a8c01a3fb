// Where messages go: a Kafka topic (kafkajs) or a file of one JSON object per line. Both take
// batches and keep their own back-pressure, so the modes (batch, live, snapshot) do not care which.
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import {
  CompressionTypes, Kafka, Partitioners, logLevel, type LogEntry, type Message as KafkaMessage, type PartitionMetadata, type Producer,
} from "kafkajs";
import { FrameCursor, forEachFrame, type FrameChunk, type Message } from "./frames.ts";
import type { Logger } from "./log.ts";

export type { Message } from "./frames.ts";

export interface MessageSink {
  /** Accepts a batch; resolves once the sink can take the next one (not necessarily delivered). */
  send(batch: Message[]): Promise<void>;
  /** The same for messages already rendered into bytes (batch mode). */
  sendFrames(chunk: FrameChunk): Promise<void>;
  /** Resolves when everything accepted so far is delivered (acked or written). */
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly description: string;
}

export interface KafkaSinkOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  /** Sends allowed in flight at once; more hides the broker's round trip. */
  readonly inFlight: number;
  /** A partition's batch is sent once its keys and values reach this many bytes (keep it under the broker's 1 MiB). */
  readonly batchBytes: number;
  readonly clientId?: string;
  readonly logger: Logger;
}

/**
 * What a record adds to a v2 record batch besides its key and value bytes (length, attributes,
 * timestamp and offset deltas, key and value lengths, header count), rounded up, so a partition's
 * batch counted here is never smaller than the one on the wire.
 */
const RECORD_OVERHEAD = 24;

function kafkaLogCreator(logger: Logger) {
  return () => ({ level, log }: LogEntry) => {
    const text = `kafkajs ${log.message}${log.error ? `: ${String(log.error)}` : ""}`;
    if (level <= logLevel.ERROR) logger.error(text);
    else logger.warn(text);
  };
}

/** The topic's partitions; a missing topic is an error (the generator never creates topics). */
async function topicPartitions(kafka: Kafka, options: KafkaSinkOptions): Promise<PartitionMetadata[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(options.topic)) {
      throw new Error(`topic "${options.topic}" does not exist on ${options.brokers.join(",")}; the generator never creates topics (world_initialize does)`);
    }
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [options.topic] })).topics;
    const partitions = [...(metadata?.partitions ?? [])].sort((a, b) => a.partitionId - b.partitionId);
    if (partitions.length === 0) throw new Error(`topic ${options.topic} has no partitions`);
    return partitions;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Produces with kafkajs: acks=1, no compression, the idempotent producer off, no topic
 * auto-creation. Messages are grouped per partition by kafkajs's DefaultPartitioner (murmur2 of
 * the key, as the Java client), and each partition's batch goes out as one sendBatch once it holds
 * about `batchBytes`, with up to `inFlight` sends unacknowledged. Keys and values of `sendFrames`
 * are Buffer views of the rendered bytes. A failed send (after kafkajs's retries) fails the run;
 * redelivery after a retry is harmless downstream, because ODS deduplicates hits on their
 * deterministic WatchID.
 */
export class KafkaSink implements MessageSink {
  readonly description: string;
  /** The producer's own partitioner, asked once per message here; the message then carries its partition. */
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly batches: KafkaMessage[][];
  private readonly batchSizes: number[];
  private readonly pending = new Set<Promise<void>>();
  private failure: Error | undefined;

  private constructor(
    private readonly options: KafkaSinkOptions,
    private readonly producer: Producer,
    private readonly partitionMetadata: PartitionMetadata[],
  ) {
    this.description = `kafka ${options.brokers.join(",")} topic ${options.topic} (${partitionMetadata.length} partitions)`;
    this.batches = partitionMetadata.map(() => []);
    this.batchSizes = partitionMetadata.map(() => 0);
  }

  static async connect(options: KafkaSinkOptions): Promise<KafkaSink> {
    const kafka = new Kafka({
      clientId: options.clientId ?? "clickstream-generator",
      brokers: [...options.brokers],
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(options.logger),
      retry: { retries: 5 },
    });
    const partitions = await topicPartitions(kafka, options);
    const producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: false,
      allowAutoTopicCreation: false,
    });
    await producer.connect();
    return new KafkaSink(options, producer, partitions);
  }

  async send(batch: Message[]): Promise<void> {
    this.throwIfFailed();
    for (const { key, value } of batch) {
      const partition = this.add(key, value, Buffer.byteLength(key) + Buffer.byteLength(value));
      if (this.isFull(partition)) await this.dispatch(partition);
    }
  }

  async sendFrames(chunk: FrameChunk): Promise<void> {
    this.throwIfFailed();
    const frames = new FrameCursor(chunk);
    while (frames.next()) {
      const partition = this.add(frames.key, frames.value, frames.key.length + frames.value.length);
      if (this.isFull(partition)) await this.dispatch(partition);
    }
  }

  async flush(): Promise<void> {
    for (let partition = 0; partition < this.batches.length; partition++) await this.dispatch(partition);
    await Promise.all(this.pending);
    this.throwIfFailed();
  }

  async close(): Promise<void> {
    try {
      await Promise.all(this.pending);
    } finally {
      await this.producer.disconnect();
    }
    this.throwIfFailed();
  }

  /** Appends a message to its partition's batch; returns the partition. */
  private add(key: Buffer | string, value: Buffer | string, bytes: number): number {
    const partition = this.partitioner({ topic: this.options.topic, partitionMetadata: this.partitionMetadata, message: { key, value } });
    (this.batches[partition] as KafkaMessage[]).push({ key, value, partition });
    this.batchSizes[partition] = (this.batchSizes[partition] ?? 0) + bytes + RECORD_OVERHEAD;
    return partition;
  }

  private isFull(partition: number): boolean {
    return (this.batchSizes[partition] ?? 0) >= this.options.batchBytes;
  }

  /** Sends a partition's batch, first waiting while `inFlight` sends are unacknowledged. */
  private async dispatch(partition: number): Promise<void> {
    const messages = this.batches[partition] ?? [];
    if (messages.length === 0) return;
    this.batches[partition] = [];
    this.batchSizes[partition] = 0;
    while (this.pending.size >= this.options.inFlight) await Promise.race(this.pending);
    this.throwIfFailed();
    const sending: Promise<void> = this.producer
      .sendBatch({ acks: 1, compression: CompressionTypes.None, topicMessages: [{ topic: this.options.topic, messages }] })
      .then(
        () => undefined,
        (err: unknown) => {
          this.failure ??= err instanceof Error ? err : new Error("kafka send failed", { cause: err });
        },
      )
      .finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}

/** One JSON object per line, "\n" after each; `-` means stdout. Keys are not written. */
export class FileSink implements MessageSink {
  readonly description: string;
  private readonly stream: WriteStream | NodeJS.WriteStream;

  constructor(readonly path: string) {
    this.description = path === "-" ? "stdout" : `file ${path}`;
    this.stream = path === "-" ? process.stdout : createWriteStream(path, { flags: "w" });
  }

  async send(batch: Message[]): Promise<void> {
    let text = "";
    for (const message of batch) text += `${message.value}\n`;
    if (!this.stream.write(text)) await once(this.stream, "drain");
  }

  async sendFrames(chunk: FrameChunk): Promise<void> {
    const out = Buffer.allocUnsafe(chunk.length);
    let o = 0;
    forEachFrame(chunk, (_key, value) => {
      o += value.copy(out, o);
      out[o++] = 0x0a;
    });
    if (!this.stream.write(out.subarray(0, o))) await once(this.stream, "drain");
  }

  async flush(): Promise<void> {
    if (this.stream.writableNeedDrain) await once(this.stream, "drain");
  }

  async close(): Promise<void> {
    if (this.stream === process.stdout) return this.flush();
    const stream = this.stream;
    await new Promise<void>((resolve, reject) => {
      stream.once("error", reject);
      stream.end(() => resolve());
    });
  }
}
