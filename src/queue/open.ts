// Opens the job store a configuration names: PostgreSQL when it has a database URL (several
// hosts share the queue there), else the SQLite file in the home — the default, unchanged for
// a user who never names a database.
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { Synchronous } from './db.js';
import { openLazyPgJobStore } from './pg/lazy.js';
import { openSqliteJobStore } from './sqlite/store.js';
import type { JobStore } from './store.js';

export interface StoreSelection {
  dbPath: string;
  dbUrl: string | undefined;
  queue: { synchronous: Synchronous };
}

/**
 * `logger`: for long-running processes (worker, serve). On PostgreSQL they then wait through
 * a database outage, retrying with backoff, and say so there in one line per retry.
 */
export function openJobStore(config: StoreSelection, clock: Clock, logger?: Logger): JobStore {
  // PostgreSQL keeps time itself (leases use its now()); the clock is SQLite's.
  if (config.dbUrl !== undefined) return openLazyPgJobStore(config.dbUrl, logger);
  return openSqliteJobStore(config.dbPath, { clock, synchronous: config.queue.synchronous });
}
