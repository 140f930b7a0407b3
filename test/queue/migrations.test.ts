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

/** A copy of the migrations folder that stops before the newest migration, or before `tag`. */
function previousMigrations(tag?: string): string {
  const folder = join(tempDir(), 'drizzle');
  cpSync(DEFAULT_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as Journal;
  expect(journal.entries.length).toBeGreaterThanOrEqual(2);
  const cut =
    tag === undefined
      ? journal.entries.length - 1
      : journal.entries.findIndex((e) => e.tag === tag);
  expect(cut).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, cut);
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
    openDatabase(path, { migrationsFolder: previousMigrations() }).close();
    const store = openSqliteJobStore(path, { clock: systemClock });
    await store.enqueue({ kind: 'noop', payload: {} });
    expect(await store.countByStatus()).toMatchObject({ queued: 1 });
    await store.close();
    // Opening again applies nothing twice.
    openDatabase(path).close();
  });

  it('rebuild the job table for the validate kind without losing a row or a link to it', async () => {
    const path = join(tempDir(), 'proctor.db');
    const old = openDatabase(path, { migrationsFolder: previousMigrations('0004_validate_kind') });
    const insertJob = old.sqlite.prepare(
      "INSERT INTO jobs (id, kind, payload, parent_id, error_code, run_at, created_at, updated_at) VALUES (?, ?, '{}', ?, ?, 1, 1, 1)",
    );
    insertJob.run(1, 'noop', null, 'DOCKER_ERROR');
    insertJob.run(2, 'grade', 1, null);
    expect(() => insertJob.run(3, 'validate', null, null)).toThrow(/CHECK constraint/);
    old.sqlite
      .prepare(
        "INSERT INTO artifacts (id, job_id, attempt, name, media_type, sha256, size, rel_path, created_at) VALUES ('a1', 1, 1, 'oracle.log', 'text/plain', ?, 0, 'x', 1)",
      )
      .run('0'.repeat(64));
    old.sqlite
      .prepare(
        "INSERT INTO tasks (task_id, content_hash, bundle_path, validity, reason, detail, job_id, checked_at) VALUES ('t', 'h', '/b', 'valid', 'PASS', '', 1, 1)",
      )
      .run();
    old.close();

    const store = openSqliteJobStore(path, { clock: systemClock });
    expect((await store.getJob(1))?.errorCode).toBe('DOCKER_ERROR');
    expect((await store.getJob(2))?.parentId).toBe(1);
    expect((await store.getArtifact('a1'))?.jobId).toBe(1);
    expect((await store.taskValidity()).tasks[0]?.jobId).toBe(1);
    const { job } = await store.enqueue({ kind: 'validate', payload: { bundle: '/b' } });
    expect((await store.claim('validate', 'w', 1, 60_000)).map((j) => j.id)).toEqual([job.id]);
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('foreign_key_check')).toEqual([]);
      const claimIndex = db
        .prepare("SELECT sql FROM sqlite_master WHERE name = 'jobs_claim'")
        .get() as { sql: string } | undefined;
      expect(claimIndex?.sql).toContain('"priority" DESC');
    } finally {
      db.close();
    }
  });

  it('add the outcome column and its checks without losing a row, a link or the claim index', async () => {
    const path = join(tempDir(), 'proctor.db');
    const old = openDatabase(path, { migrationsFolder: previousMigrations('0006_outcome') });
    const insertJob = old.sqlite.prepare(
      "INSERT INTO jobs (id, kind, status, payload, parent_id, error_code, run_at, created_at, updated_at, finished_at) VALUES (?, ?, ?, '{}', ?, ?, 1, 1, 1, ?)",
    );
    insertJob.run(1, 'solve', 'done', null, null, 5);
    insertJob.run(2, 'grade', 'failed', 1, 'DOCKER_ERROR', 6);
    old.close();

    const store = openSqliteJobStore(path, { clock: systemClock });
    expect(await store.getJob(1)).toMatchObject({ status: 'done', outcome: null });
    expect(await store.getJob(2)).toMatchObject({
      parentId: 1,
      errorCode: 'DOCKER_ERROR',
      outcome: null,
    });
    await store.close();
    const db = new Database(path);
    try {
      expect(db.pragma('foreign_key_check')).toEqual([]);
      const claimIndex = db
        .prepare("SELECT sql FROM sqlite_master WHERE name = 'jobs_claim'")
        .get() as { sql: string } | undefined;
      expect(claimIndex?.sql).toContain('"priority" DESC');
      expect(() => db.prepare("UPDATE jobs SET outcome = 'nope' WHERE id = 2").run()).toThrow(
        /CHECK constraint/,
      );
    } finally {
      db.close();
    }
  });

  it("add the batch's spend and its check without losing a batch, a job of one or a link", async () => {
    const path = join(tempDir(), 'proctor.db');
    const old = openDatabase(path, { migrationsFolder: previousMigrations('0012_batch_spend') });
    old.sqlite
      .prepare("INSERT INTO batches (id, request_hash, total, created_at) VALUES ('b1', 'h', 2, 1)")
      .run();
    const insertJob = old.sqlite.prepare(
      "INSERT INTO jobs (id, batch_id, kind, status, payload, result, run_at, created_at, updated_at, finished_at) VALUES (?, 'b1', 'solve', ?, '{}', ?, 1, 1, 1, ?)",
    );
    insertJob.run(1, 'done', '{"verdict":"FAIL","costUsd":0.5}', 5);
    insertJob.run(2, 'queued', null, null);
    old.close();

    const store = openSqliteJobStore(path, { clock: systemClock });
    expect(await store.getBatch('b1')).toMatchObject({ id: 'b1', total: 2 });
    expect((await store.getJob(2))?.batchId).toBe('b1');
    // Nothing drawn yet; the first budget check takes in what the done solve recorded.
    expect(await store.batchSpent('b1')).toBe(0);
    const [starting] = await store.claim('solve', 'w', 1, 60_000);
    const check = await store.checkBudget('b1', 1, { id: starting!.id, attempt: 1 });
    expect(check).toEqual({ spentUsd: 0.5, stopped: false, cancelled: 0 });
    expect(await store.drawCost('b1', 0.25)).toBe(0.75);
    await store.close();
    const db = new Database(path);
    try {
      expect(db.pragma('foreign_key_check')).toEqual([]);
      expect(() => db.prepare("UPDATE batches SET spent_usd = -1 WHERE id = 'b1'").run()).toThrow(
        /CHECK constraint/,
      );
    } finally {
      db.close();
    }
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
