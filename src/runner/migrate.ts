// Schema migrations for the runner's `runner` schema: numbered .sql files applied in order, each
// in its own transaction that records itself first, all under one session advisory lock so two
// runner processes starting together cannot both apply the same file. Each applied file's SHA-256
// is recorded; a file changed after it was applied (or gone, or renamed) stops the runner, naming
// it, as Flyway and graphile-migrate do: a shipped migration is never edited, a new one is added.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import type pg from "pg";
import { MigrationChangedError, SchemaTooNewError } from "./errors.ts";
import { errorMessage } from "../errors.ts";

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");
const MIGRATION_LOCK: [number, number] = [7300, 1];

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/** The file a migration comes from, as its error messages name it. */
export function migrationFile(m: Pick<Migration, "id" | "name">): string {
  return path.join("src/runner/migrations", `${String(m.id).padStart(6, "0")}_${m.name}.sql`);
}

export function migrationChecksum(m: Pick<Migration, "sql">): string {
  return createHash("sha256").update(m.sql).digest("hex");
}

/** The migrations this code knows, in order. File names: 000001_name.sql. */
export function knownMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  return files.map((file) => {
    const match = /^(\d{6})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match?.[1] || !match[2]) throw new Error(`migration file name '${file}' is not NNNNNN_name.sql`);
    return { id: Number(match[1]), name: match[2], sql: readFileSync(path.join(dir, file), "utf8") };
  });
}

const BOOTSTRAP = `
  create schema if not exists runner;
  create table if not exists runner.migrations (
    id         integer primary key,
    name       text not null,
    applied_at timestamptz not null default now()
  );
  alter table runner.migrations add column if not exists checksum text;`;

/** Applies what is missing; returns the ids applied (empty when the schema is current).
 * Throws SchemaTooNewError when the database holds a migration this code does not know. */
export async function migrate(pool: pg.Pool, migrations: Migration[] = knownMigrations()): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query("select pg_advisory_lock($1, $2)", MIGRATION_LOCK);
    try {
      return await applyMissing(client, migrations);
    } finally {
      await client.query("select pg_advisory_unlock($1, $2)", MIGRATION_LOCK);
    }
  } finally {
    client.release();
  }
}

async function applyMissing(client: pg.PoolClient, migrations: Migration[]): Promise<number[]> {
  await client.query(BOOTSTRAP);
  const { rows } = await client.query<{ latest: number | null }>("select max(id) as latest from runner.migrations");
  const latest = rows[0]?.latest ?? 0;
  const codeLatest = migrations.at(-1)?.id ?? 0;
  if (latest > codeLatest) throw new SchemaTooNewError(latest, codeLatest);

  await checkApplied(client, migrations);

  const applied: number[] = [];
  for (const migration of migrations.filter((m) => m.id > latest)) {
    await client.query("begin");
    try {
      // the row goes in first: a second process racing past the lock would fail here, not midway
      await client.query("insert into runner.migrations (id, name, checksum) values ($1, $2, $3)", [migration.id, migration.name, migrationChecksum(migration)]);
      await client.query(migration.sql);
      await client.query("commit");
    } catch (err) {
      await client.query("rollback").catch(() => undefined);
      throw new Error(`runner migration ${migration.id}_${migration.name} failed: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    applied.push(migration.id);
  }
  return applied;
}

/**
 * Every applied migration must still be in the code as it was applied: same name, same checksum.
 * A row without a checksum (applied before checksums were recorded) takes the file's as it is now.
 */
async function checkApplied(client: pg.PoolClient, migrations: readonly Migration[]): Promise<void> {
  const { rows } = await client.query<{ id: number; name: string; checksum: string | null }>("select id, name, checksum from runner.migrations order by id");
  const byId = new Map(migrations.map((m) => [m.id, m]));
  for (const row of rows) {
    const known = byId.get(row.id);
    if (!known) throw new MigrationChangedError(migrationFile(row), "it was applied to this database and is gone from the code");
    if (known.name !== row.name) throw new MigrationChangedError(migrationFile(row), `it was applied under this name and the code now calls it ${migrationFile(known)}`);
    const checksum = migrationChecksum(known);
    if (row.checksum === null) {
      await client.query("update runner.migrations set checksum = $2 where id = $1 and checksum is null", [row.id, checksum]);
    } else if (row.checksum !== checksum) {
      throw new MigrationChangedError(migrationFile(known), `its text changed after it was applied (sha256 ${row.checksum.slice(0, 12)}… applied, ${checksum.slice(0, 12)}… now)`);
    }
  }
}
