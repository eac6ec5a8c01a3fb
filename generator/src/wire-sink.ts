// The fast Kafka sink: kafkajs finds the topic, its partitions and their leaders; records then go
// straight to the leaders as Produce requests built by kafka-wire.ts, one per partition per ~batch,
// several in flight on each connection. Partitioning matches kafkajs's DefaultPartitioner (murmur2).
import net from "node:net";
import { Kafka, logLevel } from "kafkajs";
import { FrameCursor, type FrameChunk, type Message } from "./frames.ts";
import { ProduceRequestBuilder, murmur2, parseProduceResponse, partitionForKey, type PartitionResult } from "./kafka-wire.ts";
import type { Logger } from "./log.ts";
import type { MessageSink } from "./sink.ts";

const ERROR_NAMES: Readonly<Record<number, string>> = {
  2: "CORRUPT_MESSAGE", 3: "UNKNOWN_TOPIC_OR_PARTITION", 6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT",
  10: "MESSAGE_TOO_LARGE", 19: "NOT_ENOUGH_REPLICAS", 29: "TOPIC_AUTHORIZATION_FAILED", 35: "UNSUPPORTED_VERSION", 87: "INVALID_RECORD",
};

/** Errors a resend can cure: leadership not settled yet, or a slow broker. */
const RETRIABLE_ERRORS: ReadonlySet<number> = new Set([3, 6, 7, 19]);
const MAX_ATTEMPTS = 5;
/** Size prefix, api key and api version come before the correlation id. */
const CORRELATION_ID_OFFSET = 8;

export class KafkaProduceError extends Error {
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly errorCode: number,
  ) {
    super(`broker refused a batch for ${topic}[${partition}]: ${ERROR_NAMES[errorCode] ?? "error"} (code ${errorCode})`);
    this.name = "KafkaProduceError";
  }
}

interface Waiter {
  resolve(results: PartitionResult[]): void;
  reject(err: Error): void;
}

/** One TCP connection to a broker; responses arrive in request order, matched by correlation id. */
class BrokerConnection {
  private readonly waiting = new Map<number, Waiter>();
  private received: Buffer = Buffer.alloc(0);
  private broken: Error | undefined;

  private constructor(
    private readonly socket: net.Socket,
    readonly address: string,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (err) => this.fail(new Error(`connection to ${address} failed: ${err.message}`, { cause: err })));
    socket.on("close", () => this.fail(new Error(`broker ${address} closed the connection (does it accept Produce v7?)`)));
  }

  static open(host: string, port: number): Promise<BrokerConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      socket.once("connect", () => resolve(new BrokerConnection(socket, `${host}:${port}`)));
      socket.once("error", reject);
    });
  }

  request(correlationId: number, payload: Buffer): Promise<PartitionResult[]> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      this.waiting.set(correlationId, { resolve, reject });
      this.socket.write(payload);
    });
  }

  close(): void {
    this.broken ??= new Error("connection closed");
    this.socket.end();
  }

  private onData(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    while (this.received.length >= 4) {
      const size = this.received.readInt32BE(0);
      if (this.received.length < 4 + size) return;
      const frame = this.received.subarray(4, 4 + size);
      this.received = this.received.subarray(4 + size);
      const response = parseProduceResponse(frame);
      const waiter = this.waiting.get(response.correlationId);
      this.waiting.delete(response.correlationId);
      waiter?.resolve(response.partitions);
    }
  }

  private fail(err: Error): void {
    if (this.broken && this.waiting.size === 0) return;
    this.broken ??= err;
    for (const waiter of this.waiting.values()) waiter.reject(err);
    this.waiting.clear();
  }
}

export interface WireSinkOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly inFlight: number;
  /** A partition's request is sent once its records reach this many bytes (keep it under 1 MiB). */
  readonly batchBytes: number;
  readonly logger: Logger;
  readonly clientId?: string;
}

interface TopicLayout {
  /** Leader address of each partition, by partition number. */
  readonly leaders: readonly { host: string; port: number }[];
}

async function discoverTopic(options: WireSinkOptions): Promise<TopicLayout> {
  const kafka = new Kafka({ clientId: options.clientId ?? "clickstream-generator", brokers: [...options.brokers], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = await admin.listTopics();
    if (!topics.includes(options.topic)) {
      throw new Error(`topic "${options.topic}" does not exist on ${options.brokers.join(",")}; the generator never creates topics (world_initialize does)`);
    }
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [options.topic] })).topics;
    const { brokers } = await admin.describeCluster();
    const partitions = [...(metadata?.partitions ?? [])].sort((a, b) => a.partitionId - b.partitionId);
    const leaders = partitions.map((p, index) => {
      const broker = brokers.find((b) => b.nodeId === p.leader);
      if (p.partitionId !== index || !broker) throw new Error(`topic ${options.topic}: partition ${p.partitionId} has no known leader`);
      return { host: broker.host, port: broker.port };
    });
    if (leaders.length === 0) throw new Error(`topic ${options.topic} has no partitions`);
    return { leaders };
  } finally {
    await admin.disconnect();
  }
}

export class WireSink implements MessageSink {
  readonly description: string;
  private readonly builders: (ProduceRequestBuilder | undefined)[];
  private readonly pending = new Set<Promise<void>>();
  private correlationId = 1;
  private failure: Error | undefined;

  private constructor(
    private readonly options: WireSinkOptions,
    private readonly connections: readonly BrokerConnection[],
  ) {
    this.description = `kafka ${options.brokers.join(",")} topic ${options.topic} (${connections.length} partitions)`;
    this.builders = connections.map(() => undefined);
  }

  static async connect(options: WireSinkOptions): Promise<WireSink> {
    const layout = await discoverTopic(options);
    const byAddress = new Map<string, Promise<BrokerConnection>>();
    const connections = await Promise.all(layout.leaders.map(({ host, port }) => {
      const address = `${host}:${port}`;
      if (!byAddress.has(address)) byAddress.set(address, BrokerConnection.open(host, port));
      return byAddress.get(address) as Promise<BrokerConnection>;
    }));
    return new WireSink(options, connections);
  }

  async send(batch: Message[]): Promise<void> {
    this.throwIfFailed();
    const partitions = this.connections.length;
    for (const message of batch) {
      const partition = partitionForKey(message.key, partitions);
      const builder = (this.builders[partition] ??= this.newBuilder(partition));
      builder.append(message.key, message.value);
      if (builder.size >= this.options.batchBytes) await this.dispatch(partition);
    }
  }

  async sendFrames(chunk: FrameChunk): Promise<void> {
    this.throwIfFailed();
    const partitions = this.connections.length;
    const frames = new FrameCursor(chunk);
    while (frames.next()) {
      const partition = (murmur2(frames.key) & 0x7fffffff) % partitions;
      const builder = (this.builders[partition] ??= this.newBuilder(partition));
      builder.appendBytes(frames.key, frames.value);
      if (builder.size >= this.options.batchBytes) await this.dispatch(partition);
    }
  }

  async flush(): Promise<void> {
    for (let p = 0; p < this.builders.length; p++) if (this.builders[p]) await this.dispatch(p);
    await Promise.all(this.pending);
    this.throwIfFailed();
  }

  async close(): Promise<void> {
    try {
      await Promise.all(this.pending);
    } finally {
      for (const connection of new Set(this.connections)) connection.close();
    }
    this.throwIfFailed();
  }

  private newBuilder(partition: number): ProduceRequestBuilder {
    return new ProduceRequestBuilder(this.options.clientId ?? "clickstream-generator", this.options.topic, partition, this.options.batchBytes + 64 * 1024);
  }

  /** Sends a partition's request, first waiting while too many are unacknowledged. */
  private async dispatch(partition: number): Promise<void> {
    const builder = this.builders[partition];
    this.builders[partition] = undefined;
    if (!builder || builder.records === 0) return;
    while (this.pending.size >= this.options.inFlight) await Promise.race(this.pending);
    this.throwIfFailed();
    const connection = this.connections[partition] as BrokerConnection;
    const sending: Promise<void> = this.produceWithRetry(connection, builder.finish(0, 30_000, Date.now()))
      .catch((err: unknown) => {
        this.failure ??= err instanceof Error ? err : new Error("produce failed", { cause: err });
      })
      .finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  /**
   * Sends one request, resending the same bytes (under a new correlation id) when the broker
   * answers with a retriable error, as right after a topic is created. The leader is not looked
   * up again: the stand has one broker; a moved leader fails the run, which its DAG retries.
   */
  private async produceWithRetry(connection: BrokerConnection, request: Buffer): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const correlationId = this.correlationId++;
      request.writeInt32BE(correlationId, CORRELATION_ID_OFFSET);
      const refused = (await connection.request(correlationId, request)).find((r) => r.errorCode !== 0);
      if (!refused) return;
      if (!RETRIABLE_ERRORS.has(refused.errorCode) || attempt >= MAX_ATTEMPTS) {
        throw new KafkaProduceError(refused.topic, refused.partition, refused.errorCode);
      }
      this.options.logger.warn(`${refused.topic}[${refused.partition}]: ${ERROR_NAMES[refused.errorCode] ?? refused.errorCode}, resending (attempt ${attempt + 1})`);
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}
