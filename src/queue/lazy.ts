// A JobStore whose modules load, and whose database opens, on its first call. Every JobStore
// method is async, so deferring the load changes no call's shape. Used for the PostgreSQL
// store (a SQLite home should not load its driver) and by the CLI for every store (a command
// that never reaches the store, or answers without it, loads none of drizzle, the driver or
// the migrations: start-up is paid by every command).
import type { JobStore } from './store.js';

export function lazyJobStore(open: () => Promise<JobStore>): JobStore {
  let opened: Promise<JobStore> | undefined;
  const load = () => (opened ??= open());
  return new Proxy({} as JobStore, {
    get(_target, name) {
      // Not a thenable: `await store` must give the store, not call a method.
      if (typeof name === 'symbol' || name === 'then') return undefined;
      // Closing a store that was never used has nothing to close (and loads nothing).
      if (name === 'close') return async () => (opened ? (await opened).close() : undefined);
      return async (...args: unknown[]) => {
        const store = (await load()) as unknown as Record<string, (...a: unknown[]) => unknown>;
        return store[name]?.(...args);
      };
    },
  });
}
