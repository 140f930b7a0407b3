// Connects to PostgreSQL and brings its schema up to date.
//
// - One pg Pool per process. int8 (bigint) values are read as JS numbers: every bigint column
//   holds milliseconds or an id, exact below 2^53, so rows match the SQLite store's.
// - Migrations are drizzle-kit's (drizzle-pg/), applied in one transaction under
//   pg_advisory_xact_lock, so two hosts starting at once apply each migration once: the second
//   waits for the first to commit, then finds nothing left to do.
// - A URL is never printed as given: errors name it by `displayUrl`, without its password.
// - Only the PostgreSQL store loads this module (and so `pg`), on its first use: a SQLite
//   user's commands never load the driver.
import { readMigrationFiles } from 'drizzle-orm/migrator';
import pg from 'pg';
import { ProctorError, describeError } from '../../errors.js';
import { displayUrl, isPostgresUrl, unreadable } from './url.js';
import { projectPath } from '../../paths.js';

/** The migrations of the PostgreSQL schema, `<project>/drizzle-pg`. */
export const DEFAULT_PG_MIGRATIONS_FOLDER = projectPath('drizzle-pg');

const MIGRATIONS_TABLE = '__drizzle_migrations';
/** The advisory lock key of migrations ("proctor" in ASCII, as a bigint). */
const MIGRATION_LOCK = 0x70726f63746f72n;

const INT8 = 20;
const types = new pg.TypeOverrides();
types.setTypeParser(INT8, (value: string) => Number(value));

export interface PgConnectOptions {
  /** Connections in the pool. Default 10. */
  maxConnections?: number;
  /** How long to wait for a connection before failing. Default 10 000 ms. */
  connectTimeoutMs?: number;
}

export function createPool(url: string, options: PgConnectOptions = {}): pg.Pool {
  if (!isPostgresUrl(url)) throw unreadable(url, 'not a postgres:// URL');
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    types,
    application_name: 'proctor',
  });
  // An idle client whose server went away emits here; without a listener the process dies.
  // The next query gets a fresh connection (and its own error if the server is still gone).
  pool.on('error', () => {});
  // Every connection is heard from birth, for good: pg-pool emits 'connect' (synchronously)
  // once per new client, before it hands it out. While a client is checked out the pool does
  // not listen to it, and a connection cut between two statements or after its release (a
  // terminated backend's FATAL 57P01, a restarted server) emits an error that, unheard, kills
  // the process; the statement in flight fails with it anyway, so the event needs no handling.
  // Hearing a client only once `await pool.connect()` resumes is too late when the
  // handshake's last message and a FATAL arrive in one read: pg emits the error in that same
  // parse, before any promise continuation runs.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** One connection outside the pool (a LISTEN connection lives as long as its process). */
export function createClient(url: string, options: PgConnectOptions = {}): pg.Client {
  return new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    types,
    application_name: 'proctor-listen',
  });
}

/** Runs `fn` in one transaction on one connection; rolls back when it throws. */
export async function inTransaction<T>(
  pool: Pick<pg.Pool, 'connect'>,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const value = await fn(client);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch {
      broken = true;
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Applies drizzle-kit's PostgreSQL migrations that the database lacks, recording them in
 * drizzle's own table (as drizzle's migrator does), all in one transaction under an advisory
 * lock. Returns how many it applied.
 */
export async function migratePg(
  pool: pg.Pool,
  url: string,
  migrationsFolder = DEFAULT_PG_MIGRATIONS_FOLDER,
): Promise<number> {
  const migrations = readMigrationFiles({ migrationsFolder });
  try {
    return await inTransaction(pool, async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
      );
      const last = await client.query<{ created_at: number }>(
        `SELECT created_at FROM "${MIGRATIONS_TABLE}" ORDER BY created_at DESC LIMIT 1`,
      );
      const lastMillis = last.rows[0] ? Number(last.rows[0].created_at) : -Infinity;
      const newest = migrations.at(-1)?.folderMillis ?? -Infinity;
      if (lastMillis > newest) {
        throw new ProctorError(
          'DB_UNREADABLE',
          `database ${displayUrl(url)} was written by a newer Proctor (its schema is ahead of this version)`,
        );
      }
      let applied = 0;
      for (const migration of migrations) {
        if (migration.folderMillis <= lastMillis) continue;
        for (const statement of migration.sql) {
          if (statement.trim() !== '') await client.query(statement);
        }
        await client.query(`INSERT INTO "${MIGRATIONS_TABLE}" (hash, created_at) VALUES ($1, $2)`, [
          migration.hash,
          migration.folderMillis,
        ]);
        applied += 1;
      }
      return applied;
    });
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    throw unreadable(url, describeError(error), error);
  }
}
