// Opens Proctor's SQLite file, sets its PRAGMAs and brings its schema up to date.
//
// PRAGMAs, and why:
// - journal_mode=WAL: readers (status, the API) never block the one writer, and several
//   worker processes can share the file.
// - synchronous=FULL (default; `normal` is configurable): every committed job transition
//   survives an OS crash or power loss, not only a process crash. Measured here, FULL
//   allows ~8k commits/s; Proctor makes 4–6 writes per job plus heartbeats, so durability
//   costs nothing that matters, and the workers group concurrent writes into one commit.
// - busy_timeout=10000: a writer waits for another process's transaction instead of failing
//   with SQLITE_BUSY. Every multi-statement write also starts with BEGIN IMMEDIATE, because a
//   deferred transaction that upgrades to a write can fail with BUSY whatever the timeout.
// - foreign_keys=ON: SQLite leaves them off by default.
// - journal_size_limit=64 MiB: the WAL file shrinks back after a burst.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { ProctorError, describeError } from '../errors.js';
import * as schema from './schema.js';
import { projectPath } from '../paths.js';

export type Synchronous = 'full' | 'normal';

export interface OpenDatabaseOptions {
  /** Default `full`; see the header comment. */
  synchronous?: Synchronous;
  /** Default 10 000 ms. */
  busyTimeoutMs?: number;
  /** The drizzle migrations folder; defaults to the one shipped with Proctor. */
  migrationsFolder?: string;
}

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export interface OpenedDatabase {
  db: Db;
  sqlite: Database.Database;
  path: string;
  close(): void;
}

/** The migrations of the SQLite schema, `<project>/drizzle`. */
export const DEFAULT_MIGRATIONS_FOLDER = projectPath('drizzle');

const MIGRATIONS_TABLE = '__drizzle_migrations';

export function openDatabase(path: string, options: OpenDatabaseOptions = {}): OpenedDatabase {
  const unreadable = (reason: string, cause?: unknown) =>
    new ProctorError('DB_UNREADABLE', `cannot open database ${path}: ${reason}`, { cause });

  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    throw unreadable(describeError(error), error);
  }
  let stat;
  try {
    stat = statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    throw unreadable(describeError(error), error);
  }
  if (stat && !stat.isFile()) throw unreadable('not a regular file');

  let sqlite: Database.Database;
  try {
    sqlite = new Database(path, { timeout: options.busyTimeoutMs ?? 10_000 });
  } catch (error) {
    throw unreadable(describeError(error), error);
  }
  try {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('journal_size_limit = 67108864');
    applyMigrations(sqlite, options.migrationsFolder ?? DEFAULT_MIGRATIONS_FOLDER);
  } catch (error) {
    sqlite.close();
    if (error instanceof ProctorError) throw error;
    throw unreadable(describeError(error), error);
  }
  const db: Db = drizzle(sqlite, { schema });
  return { db, sqlite, path, close: () => sqlite.close() };
}

/**
 * Applies drizzle-kit's migrations in one BEGIN IMMEDIATE transaction, recording them in
 * drizzle's own table. drizzle's migrator reads the last applied migration before it takes
 * the write lock, so two processes starting at once could both apply the same migration;
 * here the check and the apply happen under the same lock.
 *
 * Foreign keys are off while migrations run, as SQLite's procedure for table changes asks:
 * drizzle-kit changes a CHECK constraint by copying a table and dropping the old one, and
 * with foreign keys on, that DROP would first delete every row, setting each reference to it
 * (a grade's parent, an artifact's job) to NULL. The `PRAGMA foreign_keys` lines in the
 * generated SQL cannot do it: inside a transaction SQLite ignores them. Before the commit,
 * foreign_key_check proves that every reference still holds.
 */
export function applyMigrations(sqlite: Database.Database, migrationsFolder: string): number {
  const migrations = readMigrationFiles({ migrationsFolder });
  const enforced = sqlite.pragma('foreign_keys', { simple: true }) === 1;
  const run = sqlite.transaction(() => {
    sqlite.exec(
      `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`,
    );
    const last = sqlite
      .prepare(`SELECT created_at FROM "${MIGRATIONS_TABLE}" ORDER BY created_at DESC LIMIT 1`)
      .get() as { created_at: number } | undefined;
    const lastMillis = last ? Number(last.created_at) : -Infinity;
    const newest = migrations.at(-1)?.folderMillis ?? -Infinity;
    if (lastMillis > newest) {
      throw new ProctorError(
        'DB_UNREADABLE',
        'the database was written by a newer Proctor (its schema is ahead of this version)',
      );
    }
    let applied = 0;
    const record = sqlite.prepare(
      `INSERT INTO "${MIGRATIONS_TABLE}" (hash, created_at) VALUES (?, ?)`,
    );
    for (const migration of migrations) {
      if (migration.folderMillis <= lastMillis) continue;
      for (const statement of migration.sql) {
        if (statement.trim() !== '') sqlite.exec(statement);
      }
      record.run(migration.hash, migration.folderMillis);
      applied += 1;
    }
    // Only after a migration ran: the check reads every reference of every table (at 100,000
    // jobs, a tenth of a second on each open of an up-to-date database, reports included).
    if (applied === 0) return applied;
    const broken = sqlite.pragma('foreign_key_check') as Array<{ table: string; parent: string }>;
    if (broken.length > 0) {
      const first = broken[0];
      throw new ProctorError(
        'DB_UNREADABLE',
        `a migration left ${broken.length} broken reference(s), the first from ${first?.table} to ${first?.parent}`,
      );
    }
    return applied;
  });
  if (enforced) sqlite.pragma('foreign_keys = OFF');
  try {
    return run.immediate();
  } finally {
    if (enforced) sqlite.pragma('foreign_keys = ON');
  }
}
