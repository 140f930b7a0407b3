// The SQLite batch_counts migration counts the jobs a database already had (the counts' cases
// run on both stores in test/queue/conformance/batch-counts.cases.ts).
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MIGRATIONS_FOLDER, openDatabase } from '../../src/queue/db.js';
import { tempDir, tempStore } from '../helpers/temp.js';

describe('the batch_counts migration', () => {
  it('counts the jobs a database already had', async () => {
    const folder = join(tempDir(), 'drizzle');
    cpSync(DEFAULT_MIGRATIONS_FOLDER, folder, { recursive: true });
    const journalPath = join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as {
      entries: Array<{ tag: string }>;
    };
    // A database from before the migration: it and every later one left out (a later one
    // applied would mark the database newer than batch_counts, which would then never run).
    const at = journal.entries.findIndex((e) => e.tag.endsWith('_batch_counts'));
    expect(at).toBeGreaterThan(0);
    journal.entries = journal.entries.slice(0, at);
    writeFileSync(journalPath, JSON.stringify(journal));
    const path = join(tempDir(), 'proctor.db');
    const old = openDatabase(path, { migrationsFolder: folder });
    old.sqlite
      .prepare("INSERT INTO batches (id, request_hash, total, created_at) VALUES ('b1', 'h', 3, 1)")
      .run();
    const insert = old.sqlite.prepare(
      "INSERT INTO jobs (batch_id, kind, status, payload, run_at, created_at, updated_at, started_at, finished_at) VALUES ('b1', 'noop', ?, '{}', 1, 1, 1, ?, ?)",
    );
    insert.run('queued', null, null);
    insert.run('done', 10, 20);
    insert.run('done', 5, 30);
    old.close();
    const store = tempStore({ path });
    const progress = await store.batchProgress('b1');
    expect(progress.counts).toMatchObject({ queued: 1, done: 2, running: 0 });
    expect(progress).toMatchObject({ firstStartedAt: 5, lastFinishedAt: 30 });
  });
});
