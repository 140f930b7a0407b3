// A batch's progress counts (SQLite: the batch_counts row its triggers keep,
// drizzle/0009_batch_counts.sql; PostgreSQL: the striped batch_counts rows its statement
// triggers keep, drizzle-pg/0003_batch_counts.sql) stay exactly what counting the jobs gives,
// on both stores, through every transition a job can make: enqueue, claim, complete, fail,
// retry, cancel, reclaim, release, children, the cost cap, prune, and two hosts racing.
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { retryKey, type JobStore } from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

const LEASE = 60_000;

export function batchCountCases(kind: StoreKind): void {
  describe('batch counts', () => {
    it('stay exact through every job transition', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock, backoff: { baseMs: 1, capMs: 1 } });
      const { batch } = await store.enqueueBatch({
        label: 'counts',
        jobs: Array.from({ length: 8 }, (_, i) => ({
          kind: 'noop' as const,
          payload: { tag: `j${i}` },
          maxAttempts: 2,
        })),
      });
      const batchId = batch!.id;
      // What counting the jobs gives (countByStatus reads the jobs, not the kept row).
      const counted = () => store.countByStatus({ batchId });
      const check = async (expected: Record<string, number>) => {
        const progress = await store.batchProgress(batchId);
        expect(progress.counts).toEqual(await counted());
        expect(progress.counts).toEqual(expected);
      };
      await check({ queued: 8, running: 0, done: 0, failed: 0, cancelled: 0 });

      const claimed = await store.claim('noop', 'w1', 5, LEASE);
      await check({ queued: 3, running: 5, done: 0, failed: 0, cancelled: 0 });
      const [a, b, c, d, e] = claimed.map((j) => ({ id: j.id, attempt: j.attempt }));
      clock.advance(1_000);
      expect(await store.complete(a!, { verdict: 'PASS' })).toBe(true);
      expect(await store.fail(b!, 'boom', { retryable: false, code: 'DOCKER_ERROR' })).toBe(
        'failed',
      );
      expect(await store.fail(c!, 'hiccup', { retryable: true })).toBe('retrying');
      await check({ queued: 4, running: 2, done: 1, failed: 1, cancelled: 0 });

      // A queued job cancelled at once, a running one asked to and then honouring it.
      const queuedIds = (await store.listJobs({ batchId, status: 'queued' })).items.map(
        (j) => j.id,
      );
      await store.cancel([queuedIds[0]!, d!.id]);
      await check({ queued: 3, running: 2, done: 1, failed: 1, cancelled: 1 });
      expect(await store.markCancelled(d!)).toBe(true);
      await check({ queued: 3, running: 1, done: 1, failed: 1, cancelled: 2 });

      // e's worker dies: its lease expires and it is reclaimed (back to the queue).
      clock.advance(LEASE + 1);
      const reclaimed = await store.reclaimExpired();
      expect(reclaimed.map((r) => r.id)).toEqual([e!.id]);
      await check({ queued: 4, running: 0, done: 1, failed: 1, cancelled: 2 });

      // Finish the rest, then prune what finished before now.
      const rest = await store.claim('noop', 'w2', 10, LEASE);
      for (const job of rest) await store.complete({ id: job.id, attempt: job.attempt }, {});
      await check({ queued: 0, running: 0, done: 5, failed: 1, cancelled: 2 });
      const progress = await store.batchProgress(batchId);
      expect(progress.firstStartedAt).toBe(1_700_000_000_000);
      expect(progress.lastFinishedAt).toBe(clock.now());
      expect(progress.finishedInWindow).toBe(rest.length);

      clock.advance(1);
      expect(await store.pruneFinished(clock.now(), 3)).toBe(3);
      // Which three go is the prune's choice; the counts must follow whichever it was.
      const left = (await store.batchProgress(batchId)).counts;
      expect(left).toEqual(await counted());
      expect(left.done + left.failed + left.cancelled).toBe(5);
      expect(await store.pruneFinished(clock.now())).toBe(5);
      await check({ queued: 0, running: 0, done: 0, failed: 0, cancelled: 0 });
    });

    it('stay exact through release, children, appended retries, the cost cap and two hosts racing', async () => {
      const [a, b] = await kind.pair();
      const solve = (n: number) => ({
        kind: 'solve' as const,
        payload: { bundle: `/t/${n}`, solver: 'm' },
      });
      const { batch, jobIds } = await a.enqueueBatch({
        jobs: [
          ...Array.from({ length: 40 }, (_, i) => ({
            kind: 'noop' as const,
            payload: { tag: `n${i}` },
          })),
          ...Array.from({ length: 4 }, (_, i) => solve(i)),
          {
            kind: 'grade' as const,
            payload: { bundle: '/b' },
            finished: { result: null, outcome: 'unresolved' as const },
          },
        ],
      });
      const batchId = batch!.id;
      const exact = async (store: JobStore) => {
        const progress = await store.batchProgress(batchId);
        expect(progress.counts).toEqual(await store.countByStatus({ batchId }));
        return progress.counts;
      };
      expect(await exact(b)).toEqual({ queued: 44, running: 0, done: 1, failed: 0, cancelled: 0 });

      // Two hosts drain the noop jobs at once, each in many small concurrent claims (compared
      // once they are done: two reads during the race would see different moments).
      const drain = async (store: JobStore, owner: string) => {
        for (;;) {
          const [job] = await store.claim('noop', owner, 1, LEASE);
          if (!job) return;
          const lease = { id: job.id, attempt: job.attempt };
          if (job.id % 3 === 0 && job.attempt === 1)
            expect(await store.release(lease, 'shutting down')).toBe(true);
          else if (job.id % 3 === 1) expect(await store.complete(lease, null)).toBe(true);
          else expect(await store.fail(lease, 'boom', { retryable: false })).toBe('failed');
        }
      };
      await Promise.all([
        ...Array.from({ length: 4 }, () => drain(a, 'h1')),
        ...Array.from({ length: 4 }, () => drain(b, 'h2')),
      ]);
      expect(await exact(a)).toMatchObject({ queued: 4, running: 0 });

      // A solve whose completion enqueues its grade as a child; one spends the whole cap.
      const [s1] = await a.claim('solve', 'w', 1, LEASE);
      expect(
        await a.complete({ id: s1!.id, attempt: 1 }, { verdict: 'PASS', costUsd: 2 }, [], {
          children: [{ kind: 'grade', payload: { bundle: '/b', candidate: 'c' } }],
        }),
      ).toBe(true);
      await exact(b);
      const [s2] = await b.claim('solve', 'w', 1, LEASE);
      const check = await b.checkBudget(batchId, 1, { id: s2!.id, attempt: 1 });
      expect(check).toMatchObject({ stopped: true, cancelled: 3 });
      await exact(a);

      // A failed job retried by appending its retry to the batch.
      const failed = jobIds.find((id) => id % 3 === 2)!;
      const appended = await b.enqueueBatch({
        batchId,
        jobs: [{ kind: 'noop', payload: { tag: 'again' }, idempotencyKey: retryKey(failed) }],
      });
      expect(appended.inserted).toBe(1);
      await exact(a);
    });

    it('keep batches apart, and read zeros for a batch with no jobs left', async () => {
      const store = await kind.open();
      const one = await store.enqueueBatch({ jobs: [{ kind: 'noop', payload: {} }] });
      const two = await store.enqueueBatch({
        jobs: [
          { kind: 'noop', payload: { tag: 'x' } },
          { kind: 'noop', payload: { tag: 'y' } },
        ],
      });
      expect((await store.batchProgress(one.batch!.id)).counts.queued).toBe(1);
      expect((await store.batchProgress(two.batch!.id)).counts.queued).toBe(2);
      // A job enqueued outside any batch touches no batch's counts.
      await store.enqueue({ kind: 'noop', payload: { tag: 'loose' } });
      expect((await store.batchProgress(two.batch!.id)).counts.queued).toBe(2);
    });
  });
}
