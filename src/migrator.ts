// The one schema migrator every owner of Postgres tables uses (the runner, the world, the loader). A
// migration set is a folder of numbered NNNNNN_name.sql files with its own ledger table
// (<schema>.migrations) and its own session advisory lock: the files are applied in order, each in
// its own transaction that records itself first, so two processes starting together apply each file
// once. Each applied file's SHA-256 is recorded; a file changed after it was applied (or gone, or
// renamed) stops the process, naming it, as Flyway and graphile-migrate do: a shipped migration is
// never edited, a new one is added. A file that moved to another owner's set is retired: its rows
// are accepted only with the checksum it shipped with.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { errorMessage } from "./errors.ts";

/** A file that left a set for another owner's: a database that applied it keeps its row. */
export interface RetiredMigration {
  id: number;
  name: string;
  /** SHA-256 of the file as it shipped: what a database that applied it recorded. */
  checksum: string;
  /** The file that owns its tables now, from the repository root. */
  movedTo: string;
}

export interface MigrationSet {
  /** Who owns the set, as its messages name it: runner, world, loader. */
  owner: string;
  /** The folder of the set's NNNNNN_name.sql files (absolute). */
  dir: string;
  /** The same folder from the repository root, as error messages name the files. */
  displayDir: string;
  /** The schema of the set's ledger table, `<schema>.migrations` (created when missing). */
  schema: string;
  /** The session advisory lock held while the set is checked and applied. */
  lock: readonly [number, number];
  retired?: readonly RetiredMigration[];
}

/** The repository root, from this file's place in it (src/migrator.ts): what displayDir is relative to. */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The set whose files are the `migrations/` folder beside the module at `moduleUrl` (its import.meta.url). */
export function migrationsBeside(moduleUrl: string, set: Omit<MigrationSet, "dir" | "displayDir">): MigrationSet {
  const dir = path.join(path.dirname(fileURLToPath(moduleUrl)), "migrations");
  return { ...set, dir, displayDir: path.relative(REPO_ROOT, dir) };
}

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/** An applied migration is not in the code as it was applied: the owner refuses to start. */
export class MigrationChangedError extends Error {
  constructor(readonly owner: string, readonly file: string, readonly problem: string, remedy = neverEdited(file)) {
    super(`${owner} migration ${file}: ${problem}. ${remedy}`);
    this.name = "MigrationChangedError";
  }
}

function neverEdited(file: string): string {
  return `A migration is never edited once applied: restore the file as it was (git log -p -- ${file}) and put the change in a new migration`;
}

/** The database holds a migration of the set that this code does not know. */
export class SchemaTooNewError extends Error {
  constructor(readonly owner: string, readonly databaseVersion: number, readonly codeVersion: number) {
    super(
      `${owner} database schema is at migration ${databaseVersion} but this code knows only up to ${codeVersion}; ` +
        "upgrade the code (git pull) or point it at another database",
    );
    this.name = "SchemaTooNewError";
  }
}

/** The file a migration comes from, as its error messages name it. */
export function migrationFile(set: Pick<MigrationSet, "displayDir">, m: Pick<Migration, "id" | "name">): string {
  return path.join(set.displayDir, `${String(m.id).padStart(6, "0")}_${m.name}.sql`);
}

export function migrationChecksum(m: Pick<Migration, "sql">): string {
  return createHash("sha256").update(m.sql).digest("hex");
}

/** The migrations of a folder, in order. File names: 000001_name.sql. */
export function knownMigrations(dir: string): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  return files.map((file) => {
    const match = /^(\d{6})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match?.[1] || !match[2]) throw new Error(`migration file name '${file}' is not NNNNNN_name.sql`);
    return { id: Number(match[1]), name: match[2], sql: readFileSync(path.join(dir, file), "utf8") };
  });
}

function ledgerTable(set: MigrationSet): string {
  return `${pg.escapeIdentifier(set.schema)}.migrations`;
}

// the checksum column came after the first databases: added where it is missing
function bootstrap(set: MigrationSet): string {
  return `
  create schema if not exists ${pg.escapeIdentifier(set.schema)};
  create table if not exists ${ledgerTable(set)} (
    id         integer primary key,
    name       text not null,
    applied_at timestamptz not null default now()
  );
  alter table ${ledgerTable(set)} add column if not exists checksum text;`;
}

/** Applies what is missing of the set; returns the ids applied (empty when the schema is current).
 * Throws SchemaTooNewError when the database holds a migration this code does not know, and
 * MigrationChangedError when an applied one is not in the code as it was applied. */
export async function migrate(pool: pg.Pool, set: MigrationSet, migrations: readonly Migration[] = knownMigrations(set.dir)): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query("select pg_advisory_lock($1, $2)", [...set.lock]);
    try {
      return await applyMissing(client, set, migrations);
    } finally {
      await client.query("select pg_advisory_unlock($1, $2)", [...set.lock]);
    }
  } finally {
    client.release();
  }
}

async function applyMissing(client: pg.PoolClient, set: MigrationSet, migrations: readonly Migration[]): Promise<number[]> {
  await client.query(bootstrap(set));
  const { rows } = await client.query<{ latest: number | null }>(`select max(id) as latest from ${ledgerTable(set)}`);
  const latest = rows[0]?.latest ?? 0;
  const codeLatest = Math.max(0, ...migrations.map((m) => m.id), ...(set.retired ?? []).map((r) => r.id));
  if (latest > codeLatest) throw new SchemaTooNewError(set.owner, latest, codeLatest);

  await checkApplied(client, set, migrations);

  const applied: number[] = [];
  for (const migration of migrations.filter((m) => m.id > latest)) {
    await client.query("begin");
    try {
      // the row goes in first: a second process racing past the lock would fail here, not midway
      await client.query(`insert into ${ledgerTable(set)} (id, name, checksum) values ($1, $2, $3)`, [migration.id, migration.name, migrationChecksum(migration)]);
      await client.query(migration.sql);
      await client.query("commit");
    } catch (err) {
      await client.query("rollback").catch(() => undefined);
      throw new Error(`${set.owner} migration ${migrationFile(set, migration)} failed: ${errorMessage(err)}`, { cause: err });
    }
    applied.push(migration.id);
  }
  return applied;
}

interface LedgerRow {
  id: number;
  name: string;
  checksum: string | null;
}

/**
 * Every applied migration must still be in the code as it was applied: same name, same checksum,
 * or retired with the checksum it shipped with. A row without a checksum (applied before checksums
 * were recorded) takes the file's as it is now (a retired file's as it shipped).
 */
async function checkApplied(client: pg.PoolClient, set: MigrationSet, migrations: readonly Migration[]): Promise<void> {
  const { rows } = await client.query<LedgerRow>(`select id, name, checksum from ${ledgerTable(set)} order by id`);
  const byId = new Map(migrations.map((m) => [m.id, m]));
  const retiredById = new Map((set.retired ?? []).map((r) => [r.id, r]));
  for (const row of rows) {
    const known = byId.get(row.id);
    const retired = retiredById.get(row.id);
    if (!known && retired?.name === row.name) {
      await checkRetired(client, set, row, retired);
      continue;
    }
    if (!known) throw new MigrationChangedError(set.owner, migrationFile(set, row), "it was applied to this database and is gone from the code");
    if (known.name !== row.name) {
      throw new MigrationChangedError(set.owner, migrationFile(set, row), `it was applied under this name and the code now calls it ${migrationFile(set, known)}`);
    }
    const checksum = migrationChecksum(known);
    if (row.checksum === null) await backfillChecksum(client, set, row.id, checksum);
    else if (row.checksum !== checksum) {
      throw new MigrationChangedError(set.owner, migrationFile(set, known), `its text changed after it was applied (sha256 ${row.checksum.slice(0, 12)}… applied, ${checksum.slice(0, 12)}… now)`);
    }
  }
}

/** A retired file's row stands for tables another owner's migration took over as the file shipped. */
async function checkRetired(client: pg.PoolClient, set: MigrationSet, row: LedgerRow, retired: RetiredMigration): Promise<void> {
  if (row.checksum === null) {
    await backfillChecksum(client, set, row.id, retired.checksum);
    return;
  }
  if (row.checksum === retired.checksum) return;
  const file = migrationFile(set, row);
  throw new MigrationChangedError(
    set.owner,
    file,
    `it moved to ${retired.movedTo}, which takes over its tables as the file shipped (sha256 ${retired.checksum.slice(0, 12)}…), and this database applied another text (sha256 ${row.checksum.slice(0, 12)}…)`,
    `Check this database's tables against ${retired.movedTo} (git log -p -- ${file} shows what shipped) and mend them by hand, or rebuild the database`,
  );
}

async function backfillChecksum(client: pg.PoolClient, set: MigrationSet, id: number, checksum: string): Promise<void> {
  await client.query(`update ${ledgerTable(set)} set checksum = $2 where id = $1 and checksum is null`, [id, checksum]);
}
