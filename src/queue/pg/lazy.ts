// The PostgreSQL store as `openJobStore` hands it out: the same JobStore, whose modules load on
// its first call. Every command opens a store through src/queue/index.ts, and a SQLite home
// (the default) should not pay for loading the PostgreSQL store's modules at start-up (about
// 20-30 ms). src/queue/lazy.ts defers the load.
import { lazyJobStore } from '../lazy.js';
import type { JobStore } from '../store.js';
import type { Logger } from '../../logger.js';
import { displayUrl, isPostgresUrl, unreadable } from './url.js';

/**
 * With a logger (a long-running process), the store rides out outages and reports them there
 * (outage.ts); without one, a call fails at once when the database is unreachable.
 */
export function openLazyPgJobStore(
  url: string,
  logger?: Pick<Logger, 'warn' | 'info'>,
  maxAttempts?: number,
): JobStore {
  // Checked now, as openPgJobStore does, so a bad URL is still refused when the store is opened.
  if (!isPostgresUrl(url)) throw unreadable(url, 'not a postgres:// URL');
  return lazyJobStore(() =>
    Promise.all([import('./store.js'), import('./outage.js')]).then(([m, outage]) =>
      m.openPgJobStore(url, {
        ...(logger ? { outages: { report: outage.loggedOutages(logger, displayUrl(url)) } } : {}),
        ...(maxAttempts !== undefined ? { maxAttempts } : {}),
      }),
    ),
  );
}
