// Where messages go: a Kafka topic (kafkajs) or a file of one JSON object per line. Both take
// batches and keep their own back-pressure, so the modes (batch, live, snapshot) do not care which.
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { Kafka, Partitioners, logLevel, type Producer, type LogEntry } from "kafkajs";
import { chunkMessages, forEachFrame, type FrameChunk, type Message } from "./frames.ts";
import type { Logger } from "./log.ts";

export type { Message } from "./frames.ts";

export interface MessageSink {
  /** Accepts a batch; resolves once the sink can take the next one (not necessarily delivered). */
  send(batch: Message[]): Promise<void>;
  /** The same for messages already encoded by the generation worker. */
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
  readonly clientId?: string;
  readonly logger: Logger;
}

function kafkaLogCreator(logger: Logger) {
  return () => ({ level, log }: LogEntry) => {
    const text = `kafkajs ${log.message}${log.error ? `: ${String(log.error)}` : ""}`;
    if (level <= logLevel.ERROR) logger.error(text);
    else logger.warn(text);
  };
}

/**
 * Produces with acks=1, no compression and the idempotent producer off: the fastest settings that
 * still confirm each batch reached the leader. Redelivery after a retry is harmless downstream,
 * because ODS deduplicates hits on their deterministic WatchID.
 */
export class KafkaSink implements MessageSink {
  readonly description: string;
  private readonly producer: Producer;
  private readonly pending = new Set<Promise<void>>();
  private failure: Error | undefined;

  private constructor(private readonly options: KafkaSinkOptions) {
    this.description = `kafka ${options.brokers.join(",")} topic ${options.topic}`;
    const kafka = new Kafka({
      clientId: options.clientId ?? "clickstream-generator",
      brokers: [...options.brokers],
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(options.logger),
      retry: { retries: 5 },
    });
    this.producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: false,
      allowAutoTopicCreation: false,
    });
  }

  static async connect(options: KafkaSinkOptions): Promise<KafkaSink> {
    const sink = new KafkaSink(options);
    await sink.producer.connect();
    return sink;
  }

  send(batch: Message[]): Promise<void> {
    return this.produce(batch);
  }

  sendFrames(chunk: FrameChunk): Promise<void> {
    return this.produce(chunkMessages(chunk));
  }

  private async produce(batch: { key: string; value: string | Buffer }[]): Promise<void> {
    this.throwIfFailed();
    while (this.pending.size >= this.options.inFlight) await Promise.race(this.pending);
    this.throwIfFailed();
    const sending: Promise<void> = this.producer
      .send({ topic: this.options.topic, acks: 1, messages: batch })
      .then(
        () => undefined,
        (err: unknown) => {
          this.failure ??= err instanceof Error ? err : new Error("kafka send failed", { cause: err });
        },
      )
      .finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  async flush(): Promise<void> {
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
