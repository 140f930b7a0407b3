import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { isProctorError } from '../../src/errors.js';
import { DEFAULT_MIGRATIONS_FOLDER, openDatabase } from '../../src/queue/db.js';
import { openSqliteJobStore } from '../../src/queue/index.js';
import { tempDir } from '../helpers/temp.js';

interface Journal {
  entries: Array<{ tag: string }>;
}

/** A copy of the migrations folder that stops before the newest migration. */
function previousMigrations(): string {
  const folder = join(tempDir(), 'drizzle');
  cpSync(DEFAULT_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as Journal;
  expect(journal.entries.length).toBeGreaterThanOrEqual(2);
  journal.entries.pop();
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

function tables(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{
      name: string;
    }>;
    return rows.map((r) => r.name);
  } finally {
    db.close();
  }
}

function jobColumns(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('PRAGMA table_info(jobs)').all() as Array<{ name: string }>).map(
      (c) => c.name,
    );
  } finally {
    db.close();
  }
}

describe('migrations', () => {
  it('apply to an empty file', () => {
    const path = join(tempDir(), 'proctor.db');
    openDatabase(path).close();
    expect(tables(path)).toEqual(expect.arrayContaining(['jobs', 'batches', 'artifacts']));
    const pragmas = new Database(path);
    expect(pragmas.pragma('journal_mode', { simple: true })).toBe('wal');
    pragmas.close();
  });

  it('apply to a file at the previous migration, keeping its jobs', async () => {
    const path = join(tempDir(), 'proctor.db');
    const old = openDatabase(path, { migrationsFolder: previousMigrations() });
    old.sqlite
      .prepare(
        "INSERT INTO jobs (kind, payload, run_at, created_at, updated_at) VALUES ('noop', '{}', 1, 1, 1)",
      )
      .run();
    old.close();
    expect(jobColumns(path)).not.toContain('error_code');

    const store = openSqliteJobStore(path, { clock: systemClock });
    expect(jobColumns(path)).toContain('error_code');
    expect(await store.countByStatus()).toMatchObject({ queued: 1 });
    await store.close();
    // Opening again applies nothing twice.
    openDatabase(path).close();
  });

  it('refuses a database written by a newer Proctor', () => {
    const path = join(tempDir(), 'proctor.db');
    openDatabase(path).close();
    try {
      openDatabase(path, { migrationsFolder: previousMigrations() });
      expect.unreachable();
    } catch (error) {
      expect(isProctorError(error, 'DB_UNREADABLE')).toBe(true);
      expect((error as Error).message).toContain('newer Proctor');
    }
  });

  it.each([
    [
      'a file that is not SQLite',
      (p: string) => writeFileSync(p, 'this is not a database, just some text'.repeat(100)),
      'file is not a database',
    ],
    ['a directory', (p: string) => mkdirSync(p), 'not a regular file'],
  ])('reports %s as DB_UNREADABLE', (_, make, reason) => {
    const path = join(tempDir(), 'proctor.db');
    make(path);
    try {
      openDatabase(path);
      expect.unreachable();
    } catch (error) {
      expect(isProctorError(error, 'DB_UNREADABLE')).toBe(true);
      expect((error as Error).message).toBe(`cannot open database ${path}: ${reason}`);
    }
  });
});
