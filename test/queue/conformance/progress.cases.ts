// A running job's progress (an image pull's), against both stores: written and read only while
// the job runs at the writer's attempt, cleared by null, never shown for a later attempt or a
// finished job, and refused in one line when it is too large or asked for too many jobs.
import { describe, expect, it } from 'vitest';
import { MAX_PAGE, MAX_PROGRESS_BYTES, type JobStore } from '../../../src/queue/store.js';
import type { StoreKind } from '../../helpers/stores.js';

async function running(store: JobStore) {
  const { job } = await store.enqueue({ kind: 'noop', payload: {}, maxAttempts: 3 });
  const [claimed] = await store.claim('noop', 'w', 1, 60_000);
  expect(claimed?.id).toBe(job.id);
  return { id: job.id, attempt: claimed!.attempt };
}

export function progressCases(kind: StoreKind): void {
  describe('job progress', () => {
    it('is written while the job runs, replaced by the next write, and cleared with null', async () => {
      const store = await kind.open();
      const lease = await running(store);
      const other = await running(store);
      expect(await store.setProgress(lease, '{"bytes":1}')).toBe(true);
      expect(await store.setProgress(lease, '{"bytes":2}')).toBe(true);
      const read = await store.jobProgress([lease.id, other.id, 999]);
      expect([...read.entries()]).toEqual([[lease.id, '{"bytes":2}']]);
      expect(await store.setProgress(lease, null)).toBe(true);
      expect((await store.jobProgress([lease.id])).size).toBe(0);
      expect((await store.jobProgress([])).size).toBe(0);
    });

    it('is neither written nor shown once the attempt that wrote it has lost its lease or ended', async () => {
      const store = await kind.open();
      const lease = await running(store);
      expect(await store.setProgress(lease, '{"bytes":1}')).toBe(true);
      // Released: a new attempt will claim it; the old attempt's row is not its progress.
      expect(await store.release(lease, 'test')).toBe(true);
      expect((await store.jobProgress([lease.id])).size).toBe(0);
      expect(await store.setProgress(lease, '{"bytes":2}')).toBe(false);
      const [again] = await store.claim('noop', 'w', 1, 60_000);
      expect(again?.attempt).toBeGreaterThan(lease.attempt);
      expect((await store.jobProgress([lease.id])).size).toBe(0);
      const next = { id: lease.id, attempt: again!.attempt };
      expect(await store.setProgress(next, '{"bytes":3}')).toBe(true);
      expect(await store.complete(next, { ok: true })).toBe(true);
      expect((await store.jobProgress([lease.id])).size).toBe(0);
      expect(await store.setProgress(next, '{"bytes":4}')).toBe(false);
    });

    it('refuses a document over the limit and a read of too many jobs, in one line', async () => {
      const store = await kind.open();
      const lease = await running(store);
      await expect(store.setProgress(lease, 'x'.repeat(MAX_PROGRESS_BYTES + 1))).rejects.toThrow(
        /^setProgress: at most 4096 bytes of progress, got 4097$/,
      );
      const ids = Array.from({ length: MAX_PAGE + 1 }, (_, i) => i + 1);
      await expect(store.jobProgress(ids)).rejects.toThrow(
        /^jobProgress: at most 200 jobs per call, got 201$/,
      );
      expect((await store.jobProgress([lease.id])).size).toBe(0);
    });
  });
}
