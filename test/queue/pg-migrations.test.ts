// PostgreSQL migrations on a database that already has work: batch_counts
// (drizzle-pg/*_batch_counts.sql) starts from what counting the jobs gives and its triggers
// keep it so; test_statuses leaves earlier grades working; a batch's spend starts at nothing
// and the first budget check takes in what its done solves recorded.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PG_MIGRATIONS_FOLDER } from '../../src/queue/pg/db.js';
import { openPgJobStore } from '../../src/queue/pg/store.js';
import { emptyPgDatabase } from '../helpers/postgres.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

/** The shipped migrations up to (without) the one whose tag ends with `suffix`. */
function migrationsBefore(suffix: string): string {
  const folder = join(tempDir(), 'drizzle-pg');
  cpSync(DEFAULT_PG_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as {
    entries: Array<{ tag: string }>;
  };
  const cut = journal.entries.findIndex((e) => e.tag.endsWith(suffix));
  expect(cut).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, cut);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

/** How many migrations the journal holds from the one whose tag ends with `suffix` on. */
function migrationsFrom(suffix: string): number {
  const journal = JSON.parse(
    readFileSync(join(DEFAULT_PG_MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8'),
  ) as { entries: Array<{ tag: string }> };
  return journal.entries.length - journal.entries.findIndex((e) => e.tag.endsWith(suffix));
}

describe('PostgreSQL migrations', () => {
  it('start batch_counts from the jobs already there, then keep them', async () => {
    const url = await emptyPgDatabase();
    const old = openPgJobStore(url, { migrationsFolder: migrationsBefore('_batch_counts') });
    const { batch } = await old.enqueueBatch({
      jobs: Array.from({ length: 6 }, (_, i) => ({
        kind: 'noop' as const,
        payload: { tag: `${i}` },
      })),
    });
    const other = await old.enqueueBatch({ jobs: [{ kind: 'noop', payload: { tag: 'x' } }] });
    const [a, b, c] = await old.claim('noop', 'w', 3, 60_000);
    expect(await old.complete({ id: a!.id, attempt: 1 }, null)).toBe(true);
    expect(await old.fail({ id: b!.id, attempt: 1 }, 'boom', { retryable: false })).toBe('failed');
    await old.close();

    const store = openPgJobStore(url);
    onCleanup(() => store.close());
    expect(await store.migrate()).toBeGreaterThanOrEqual(1);
    const batchId = batch!.id;
    const progress = await store.batchProgress(batchId);
    expect(progress.counts).toEqual(await store.countByStatus({ batchId }));
    expect(progress.counts).toEqual({ queued: 3, running: 1, done: 1, failed: 1, cancelled: 0 });
    expect(progress.firstStartedAt).toBe(a!.startedAt);
    expect((await store.batchProgress(other.batch!.id)).counts.queued).toBe(1);

    expect(await store.complete({ id: c!.id, attempt: 1 }, null)).toBe(true);
    expect((await store.batchProgress(batchId)).counts).toEqual({
      queued: 3,
      running: 0,
      done: 2,
      failed: 1,
      cancelled: 0,
    });
  });

  it('add test_statuses to a database with grades, which keep working without any', async () => {
    const url = await emptyPgDatabase();
    const old = openPgJobStore(url, { migrationsFolder: migrationsBefore('_mature_medusa') });
    const { job } = await old.enqueue({ kind: 'grade', payload: { bundle: '/b', candidate: 'c' } });
    await old.claim('grade', 'w', 1, 60_000);
    expect(
      await old.complete({ id: job.id, attempt: 1 }, { verdict: 'PASS', reason: 'PASS' }),
    ).toBe(true);
    await old.close();

    const store = openPgJobStore(url);
    onCleanup(() => store.close());
    expect(await store.migrate()).toBeGreaterThanOrEqual(1);
    expect(await store.testStatuses([job.id])).toEqual(new Map());
    expect((await store.getJob(job.id))?.result).toEqual({ verdict: 'PASS', reason: 'PASS' });
    const { job: next } = await store.enqueue({
      kind: 'grade',
      payload: { bundle: '/b', candidate: 'd' },
    });
    await store.claim('grade', 'w', 1, 60_000);
    const tests = {
      v: 1,
      hidden: { state: 'not_run', groups: [] },
      existing: { state: 'not_run', groups: [] },
    };
    expect(
      await store.complete({ id: next.id, attempt: 1 }, { verdict: 'FAIL' }, [], { tests }),
    ).toBe(true);
    expect(await store.testStatuses([job.id, next.id])).toEqual(
      new Map([[next.id, JSON.stringify(tests)]]),
    );
  });

  it("add a batch's spend to a database with a batch under way, counting its done solves", async () => {
    const url = await emptyPgDatabase();
    const old = openPgJobStore(url, { migrationsFolder: migrationsBefore('_batch_spend') });
    const { batch } = await old.enqueueBatch({
      jobs: [0, 1].map((i) => ({
        kind: 'solve' as const,
        payload: { bundle: `/t/${i}`, solver: 'm' },
      })),
    });
    const [done] = await old.claim('solve', 'w', 1, 60_000);
    await old.complete({ id: done!.id, attempt: 1 }, { verdict: 'FAIL', costUsd: 0.5 });
    await old.close();

    const store = openPgJobStore(url);
    onCleanup(() => store.close());
    // batch_spend, its check, and every migration after them.
    expect(await store.migrate()).toBe(migrationsFrom('_batch_spend'));
    const batchId = batch!.id;
    expect(await store.batchSpent(batchId)).toBe(0);
    const [starting] = await store.claim('solve', 'w', 1, 60_000);
    const check = await store.checkBudget(batchId, 1, { id: starting!.id, attempt: 1 });
    expect(check).toEqual({ spentUsd: 0.5, stopped: false, cancelled: 0 });
    expect(await store.drawCost(batchId, 0.25)).toBe(0.75);
    const pool = await store.pool();
    await expect(pool.query('UPDATE batches SET spent_usd = -1')).rejects.toThrow(
      /batches_spent_nonnegative/,
    );
  });
});
