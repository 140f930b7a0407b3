// A real PostgreSQL for tests: the throw-away cluster of .ci/postgres (unix socket only),
// whose URL .ci/run and global-setup.ts pass in PROCTOR_TEST_PG_URL. When the variable is
// absent (a single file run with vitest.fast.config.ts), the cluster is started here, the same
// way. A missing PostgreSQL fails the run with the reason; it never skips.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import {
  openPgJobStore,
  type PgJobStore,
  type PgJobStoreOptions,
} from '../../src/queue/pg/store.js';
import { startTestPostgres } from './postgres-server.js';
import { onCleanup } from './temp.js';

let cached: string | undefined;
export function testPostgresUrl(): string {
  cached ??= process.env.PROCTOR_TEST_PG_URL || startTestPostgres();
  return cached;
}

/** The URL of another database on the same server. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin<T>(
  fn: (client: pg.Client) => Promise<T>,
  url = testPostgresUrl(),
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function createDatabase(): Promise<{ name: string; url: string }> {
  const name = `proctor_t_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return { name, url: withDatabase(testPostgresUrl(), name) };
}

async function dropDatabase(name: string): Promise<void> {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/** A fresh, empty (unmigrated) database, dropped after the test; returns its URL. */
export async function emptyPgDatabase(): Promise<string> {
  const { name, url } = await createDatabase();
  onCleanup(() => dropDatabase(name));
  return url;
}

// Making a database costs hundreds of ms on a busy machine, so each test file gets one, and
// each test empties it first (every table but drizzle's record of migrations).
let fileDatabase: Promise<{ name: string; url: string }> | undefined;
afterAll(async () => {
  if (fileDatabase) await dropDatabase((await fileDatabase).name);
  fileDatabase = undefined;
});

const EMPTY_ALL = `DO $$ DECLARE t text; BEGIN
  SELECT string_agg(format('%I', tablename), ', ') INTO t FROM pg_tables
  WHERE schemaname = 'public' AND tablename <> '__drizzle_migrations';
  IF t IS NOT NULL THEN EXECUTE 'TRUNCATE ' || t || ' RESTART IDENTITY CASCADE'; END IF;
END $$`;

/** This test file's database, emptied (migrated once its first store opened); its URL. */
export async function tempPgDatabase(): Promise<string> {
  fileDatabase ??= createDatabase();
  const { url } = await fileDatabase;
  await admin((c) => c.query(EMPTY_ALL), url);
  return url;
}

/** A PgJobStore on a fresh database (or on `url`), closed after the test. */
export async function tempPgStore(
  options: PgJobStoreOptions & { url?: string } = {},
): Promise<PgJobStore> {
  const url = options.url ?? (await tempPgDatabase());
  const store = openPgJobStore(url, { maxConnections: 4, ...options });
  onCleanup(() => store.close());
  return store;
}
