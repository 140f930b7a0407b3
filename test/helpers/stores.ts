// The two JobStore implementations, opened the same way, for the conformance suite
// (test/queue/conformance.test.ts): each case runs against a fresh, migrated SQLite file and a
// fresh, migrated PostgreSQL database.
import { join } from 'node:path';
import type { Clock } from '../../src/clock.js';
import type { BackoffOptions, JobStore } from '../../src/queue/index.js';
import { tempPgDatabase, tempPgStore } from './postgres.js';
import { tempDir, tempStore } from './temp.js';

export interface StoreOptions {
  clock?: Clock;
  backoff?: BackoffOptions;
  maxAttempts?: number;
}

export interface StoreKind {
  name: 'sqlite' | 'postgres';
  open(options?: StoreOptions): Promise<JobStore>;
  /** Two stores on the same database, as two processes (or hosts) would have. */
  pair(options?: StoreOptions): Promise<[JobStore, JobStore]>;
}

export const sqliteKind: StoreKind = {
  name: 'sqlite',
  open: async (options = {}) => tempStore(options),
  async pair(options = {}) {
    const path = join(tempDir(), 'proctor.db');
    return [tempStore({ ...options, path }), tempStore({ ...options, path })];
  },
};

export const postgresKind: StoreKind = {
  name: 'postgres',
  open: (options = {}) => tempPgStore(options),
  async pair(options = {}) {
    const url = await tempPgDatabase();
    return [await tempPgStore({ ...options, url }), await tempPgStore({ ...options, url })];
  },
};

export const STORE_KINDS: StoreKind[] = [sqliteKind, postgresKind];
