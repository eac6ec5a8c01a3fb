// A throwaway Postgres database on the stand for one benchmark run, dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadStandConfig, postgresUrl } from "../src/config/index.ts";

export async function withBenchDatabase<T>(prefix: string, work: (url: string) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: postgresUrl(loadStandConfig().postgres.database) });
  await admin.connect();
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  await admin.query(`create database ${name}`);
  try {
    return await work(postgresUrl(name));
  } finally {
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
  }
}
