// A kafkajs admin client for the world tasks, connected for the length of one call.
import { Kafka, logLevel, type Admin } from "kafkajs";
import { kafkaBroker, loadStandConfig, type StandConfig } from "../src/config/index.ts";

export interface KafkaTarget {
  /** host:port list; the stand's broker (stand.yaml) when omitted. */
  brokers?: readonly string[];
  config?: StandConfig;
}

export function worldBrokers(target: KafkaTarget): string[] {
  return target.brokers ? [...target.brokers] : [kafkaBroker(target.config ?? loadStandConfig())];
}

/** Runs `work` with a connected admin client and always disconnects it. */
export async function withKafkaAdmin<T>(target: KafkaTarget, clientId: string, work: (admin: Admin) => Promise<T>): Promise<T> {
  const kafka = new Kafka({ clientId, brokers: worldBrokers(target), logLevel: logLevel.NOTHING, retry: { retries: 5 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}
