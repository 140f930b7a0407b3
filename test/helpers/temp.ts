// Temporary folders and real, migrated SQLite stores for tests, removed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { systemClock } from '../../src/clock.js';
import {
  openSqliteJobStore,
  type SqliteJobStore,
  type SqliteJobStoreOptions,
} from '../../src/queue/index.js';

const cleanups: Array<() => Promise<void> | void> = [];

// Every cleanup runs even when one throws (a failed check must not leave folders or
// containers behind); the first error then fails the test.
afterEach(async () => {
  const errors: unknown[] = [];
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()?.();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw errors[0];
});

export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

export function tempDir(prefix = 'proctor-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A fresh migrated database file in a temp dir; closed after the test. */
export function tempStore(
  options: Partial<SqliteJobStoreOptions> & { clock?: Clock; path?: string } = {},
): SqliteJobStore {
  const path = options.path ?? join(tempDir(), 'proctor.db');
  const store = openSqliteJobStore(path, { clock: systemClock, ...options });
  onCleanup(() => store.close());
  return store;
}
