import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

// A scoped claim: what a `--wait` command's pool takes while a worker serves the home.
export function claimScopeCases(kind: StoreKind): void {
  const LEASE = 60_000;
  const noop = (tag: string) => ({ kind: 'noop' as const, payload: { tag } });

  /** Two batches, each with a child of its first job, and a loose job with a child. */
  async function seed(store: JobStore) {
    const a = await store.enqueueBatch({ label: 'a', jobs: [noop('a1'), noop('a2')] });
    const b = await store.enqueueBatch({ label: 'b', jobs: [noop('b1'), noop('b2')] });
    const aChild = await store.enqueue({ ...noop('a-child'), parentId: a.jobIds[0] });
    const bChild = await store.enqueue({ ...noop('b-child'), parentId: b.jobIds[0] });
    const loose = await store.enqueue(noop('loose'));
    const looseChild = await store.enqueue({ ...noop('loose-child'), parentId: loose.job.id });
    return {
      a: a.batch?.id as string,
      aJobs: [...a.jobIds, aChild.job.id],
      bJobs: [...b.jobIds, bChild.job.id],
      loose: loose.job.id,
      looseJobs: [loose.job.id, looseChild.job.id],
    };
  }
  const ids = (jobs: { id: number }[]) => jobs.map((j) => j.id).sort((x, y) => x - y);

  describe('scoped claim', () => {
    it("takes only one batch's jobs and their children, and leaves every other job queued", async () => {
      const store = await kind.open();
      const seeded = await seed(store);
      const claimed = await store.claim('noop', 'w', 10, LEASE, { batchId: seeded.a });
      expect(ids(claimed)).toEqual(seeded.aJobs);
      expect(claimed.every((j) => j.status === 'running' && j.leaseOwner === 'w')).toBe(true);
      expect(await store.claim('noop', 'w', 10, LEASE, { batchId: seeded.a })).toEqual([]);
      expect(await store.countByStatus()).toMatchObject({ queued: 5, running: 3 });
      // An unscoped claim still takes everything else.
      expect(ids(await store.claim('noop', 'x', 10, LEASE))).toEqual(
        [...seeded.bJobs, ...seeded.looseJobs].sort((x, y) => x - y),
      );
    });

    it('takes only one job and its children when scoped to a job', async () => {
      const store = await kind.open();
      const seeded = await seed(store);
      expect(ids(await store.claim('noop', 'w', 10, LEASE, { jobId: seeded.loose }))).toEqual(
        seeded.looseJobs,
      );
      expect(await store.countByStatus()).toMatchObject({ queued: 6, running: 2 });
    });

    it('takes nothing for a batch with no queued job, however many other jobs are due', async () => {
      const store = await kind.open();
      await seed(store);
      expect(await store.claim('noop', 'w', 10, LEASE, { batchId: 'b_none' })).toEqual([]);
      expect(await store.claim('noop', 'w', 10, LEASE, { jobId: 999_999 })).toEqual([]);
      expect(await store.countByStatus()).toMatchObject({ queued: 8 });
    });

    it('keeps its scope when it runs beside unscoped claims of the same kind', async () => {
      const store = await kind.open();
      const seeded = await seed(store);
      // At once: the PostgreSQL store coalesces simultaneous claims into one statement.
      const [scoped, all] = await Promise.all([
        store.claim('noop', 'w', 10, LEASE, { batchId: seeded.a }),
        store.claim('noop', 'x', 2, LEASE),
      ]);
      expect(ids(scoped).every((id) => seeded.aJobs.includes(id))).toBe(true);
      expect(scoped.length + all.length).toBe(new Set(ids([...scoped, ...all])).size);
      expect(all).toHaveLength(2);
      expect(ids(scoped)).toEqual(seeded.aJobs.filter((id) => !ids(all).includes(id)));
    });
  });
}
