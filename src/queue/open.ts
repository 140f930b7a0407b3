// Opens the job store a configuration names: PostgreSQL when it has a database URL (several
// hosts share the queue there), else the SQLite file in the home — the default, unchanged for
// a user who never names a database. The artifact store follows the same choice: files under
// `<home>/artifacts` beside SQLite, the database's own `artifact_blobs` table beside
// PostgreSQL, so that every host reads what any host stored.
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { createArtifactStore, type ArtifactStore, type Redactor } from '../store/index.js';
import type { Logger } from '../logger.js';
import type { Synchronous } from './db.js';
import { openLazyPgJobStore } from './pg/lazy.js';
import type { PgJobStore } from './pg/store.js';
import { openSqliteJobStore } from './sqlite/store.js';
import type { JobStore } from './store.js';

export interface StoreSelection {
  dbPath: string;
  dbUrl: string | undefined;
  /** `max_attempts`: tries for a job whose request sets none; 3 when absent. */
  queue: { synchronous: Synchronous; max_attempts?: number };
}

/**
 * `logger`: for long-running processes (worker, serve). On PostgreSQL they then wait through
 * a database outage, retrying with backoff, and say so there in one line per retry.
 */
export function openJobStore(config: StoreSelection, clock: Clock, logger?: Logger): JobStore {
  // PostgreSQL keeps time itself (leases use its now()); the clock is SQLite's.
  const { max_attempts: maxAttempts } = config.queue;
  if (config.dbUrl !== undefined) return openLazyPgJobStore(config.dbUrl, logger, maxAttempts);
  return openSqliteJobStore(config.dbPath, {
    clock,
    synchronous: config.queue.synchronous,
    ...(maxAttempts !== undefined ? { maxAttempts } : {}),
  });
}

/**
 * The artifact store that goes with `store`, which must be the one openJobStore opened for the
 * same configuration: on PostgreSQL it shares that store's connections (and its migrations).
 * Its module loads on first use, as the PostgreSQL store's does.
 */
export function openArtifactStore(
  config: { home: string; dbUrl: string | undefined },
  store: JobStore,
  deps: { redactor: Redactor; clock: Clock },
): ArtifactStore {
  if (config.dbUrl === undefined) {
    return createArtifactStore({ root: join(config.home, 'artifacts'), ...deps });
  }
  // A store opened from a URL is a PgJobStore (behind openLazyPgJobStore's loader).
  const pool = () => (store as PgJobStore).pool();
  let opened: Promise<ArtifactStore> | undefined;
  const load = () =>
    (opened ??= import('./pg/artifacts.js').then((m) =>
      m.createPgArtifactStore({ pool, redactor: deps.redactor }),
    ));
  return {
    root: 'postgresql',
    write: async (input) => (await load()).write(input),
    discard: async (record) => (await load()).discard(record),
    read: async (record, options) => (await load()).read(record, options),
    open: async (record) => (await load()).open(record),
    readSlice: async (record, slice) => (await load()).readSlice(record, slice),
    sweep: async (index, options) => (await load()).sweep(index, options),
  };
}
