import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { backoffDelay } from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

export function claimCases(kind: StoreKind): void {
  const LEASE = 60_000;

  describe('claim', () => {
    it('takes jobs of one kind by priority, then age', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const low = await store.enqueue({ kind: 'noop', payload: { tag: 'low' }, priority: -1 });
      clock.advance(1);
      const old = await store.enqueue({ kind: 'noop', payload: { tag: 'old' } });
      clock.advance(1);
      const young = await store.enqueue({ kind: 'noop', payload: { tag: 'young' } });
      clock.advance(1);
      const urgent = await store.enqueue({ kind: 'noop', payload: { tag: 'urgent' }, priority: 5 });
      await store.enqueue({
        kind: 'grade',
        payload: { bundle: '/b', candidate: 'c' },
        priority: 100,
      });
      const claimed = await store.claim('noop', 'w1', 10, LEASE);
      expect(claimed.map((j) => j.id)).toEqual([
        urgent.job.id,
        old.job.id,
        young.job.id,
        low.job.id,
      ]);
      expect(
        claimed.every((j) => j.status === 'running' && j.attempt === 1 && j.leaseOwner === 'w1'),
      ).toBe(true);
      expect(claimed[0]?.leaseExpiresAt).toBe(clock.now() + LEASE);
    });

    it('claims no more than asked, and never the same job twice', async () => {
      const store = await kind.open();
      await store.enqueueBatch({
        jobs: Array.from({ length: 10 }, () => ({ kind: 'noop' as const, payload: {} })),
      });
      const a = await store.claim('noop', 'a', 4, LEASE);
      const b = await store.claim('noop', 'b', 4, LEASE);
      const c = await store.claim('noop', 'c', 4, LEASE);
      expect([a.length, b.length, c.length]).toEqual([4, 4, 2]);
      expect(new Set([...a, ...b, ...c].map((j) => j.id)).size).toBe(10);
      expect(await store.claim('noop', 'd', 4, LEASE)).toEqual([]);
    });

    it('claims a job once even after it waited in the queue longer than the lease', async () => {
      // plainjob counts its timeout from enqueue, so such a job runs twice; leases here count from the claim.
      const clock = manualClock();
      const [one, two] = await kind.pair({ clock });
      const { job } = await one.enqueue({ kind: 'noop', payload: {} });
      clock.advance(10 * LEASE);
      const [first, second] = await Promise.all([
        one.claim('noop', 'one', 1, LEASE),
        two.claim('noop', 'two', 1, LEASE),
      ]);
      expect([...(first ?? []), ...(second ?? [])].map((j) => j.id)).toEqual([job.id]);
      expect(await one.reclaimExpired()).toEqual([]);
      expect(await two.reclaimExpired()).toEqual([]);
      clock.advance(LEASE - 1);
      expect(await two.reclaimExpired()).toEqual([]);
    });

    it('skips jobs whose run_at is in the future', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      await store.enqueue({ kind: 'noop', payload: {}, runAt: clock.now() + 5_000 });
      expect(await store.claim('noop', 'w', 1, LEASE)).toHaveLength(0);
      clock.advance(5_000);
      expect(await store.claim('noop', 'w', 1, LEASE)).toHaveLength(1);
    });
  });

  describe('fenced writes', () => {
    it('completes once, and records artifacts with the completion', async () => {
      const store = await kind.open();
      await store.enqueue({ kind: 'noop', payload: {} });
      const [job] = await store.claim('noop', 'w', 1, LEASE);
      const lease = { id: job!.id, attempt: job!.attempt };
      const artifact = {
        id: 'a1',
        name: 'log',
        mediaType: 'text/plain',
        sha256: 'a'.repeat(64),
        size: 3,
        relPath: 'x/log',
      };
      expect(await store.complete(lease, { verdict: 'PASS' }, [artifact])).toBe(true);
      expect(await store.complete(lease, { verdict: 'FAIL' }, [artifact])).toBe(false);
      const done = await store.getJob(lease.id);
      expect(done).toMatchObject({ status: 'done', result: { verdict: 'PASS' }, leaseOwner: null });
      expect(await store.listArtifacts(lease.id)).toEqual([
        expect.objectContaining({ id: 'a1', jobId: lease.id, attempt: 1 }),
      ]);
    });

    it('ignores every write of a worker whose lease was reclaimed', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      await store.enqueue({ kind: 'noop', payload: {} });
      const [stale] = await store.claim('noop', 'slow', 1, LEASE);
      clock.advance(LEASE + 1);
      expect(await store.reclaimExpired()).toEqual([
        { id: stale!.id, attempt: 1, status: 'queued', owner: 'slow' },
      ]);
      const [fresh] = await store.claim('noop', 'fast', 1, LEASE);
      expect(fresh?.attempt).toBe(2);
      const old = { id: stale!.id, attempt: 1 };
      expect(await store.heartbeat([old], LEASE)).toEqual([
        { ...old, alive: false, cancelRequested: false },
      ]);
      expect(await store.complete(old, 'late')).toBe(false);
      expect(await store.fail(old, 'late')).toBe('lost');
      expect(await store.release(old, 'late')).toBe(false);
      expect(await store.markCancelled(old)).toBe(false);
      expect(await store.getJob(old.id)).toMatchObject({
        status: 'running',
        attempt: 2,
        leaseOwner: 'fast',
      });
    });

    it('heartbeats extend the lease and report a cancel request', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const { job } = await store.enqueue({ kind: 'noop', payload: {} });
      await store.claim('noop', 'w', 1, LEASE);
      const lease = { id: job.id, attempt: 1 };
      clock.advance(LEASE - 1);
      expect(await store.heartbeat([lease], LEASE)).toEqual([
        { ...lease, alive: true, cancelRequested: false },
      ]);
      clock.advance(LEASE - 1);
      expect(await store.reclaimExpired()).toEqual([]);
      await store.cancel([job.id]);
      expect(await store.heartbeat([lease], LEASE)).toEqual([
        { ...lease, alive: true, cancelRequested: true },
      ]);
      expect(await store.cancelRequested('w')).toEqual([lease]);
      expect(await store.cancelRequested('other')).toEqual([]);
    });

    it('retries with capped exponential backoff, then fails at max attempts', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const { job } = await store.enqueue({ kind: 'noop', payload: {}, maxAttempts: 3 });
      for (const attempt of [1, 2]) {
        const [claimed] = await store.claim('noop', 'w', 1, LEASE);
        expect(claimed?.attempt).toBe(attempt);
        expect(await store.fail({ id: job.id, attempt }, `boom ${attempt}`)).toBe('retrying');
        const queued = await store.getJob(job.id);
        expect(queued).toMatchObject({ status: 'queued', lastError: `boom ${attempt}` });
        expect(queued?.runAt).toBe(clock.now() + backoffDelay(attempt));
        expect(await store.claim('noop', 'w', 1, LEASE)).toHaveLength(0);
        clock.advance(backoffDelay(attempt));
      }
      await store.claim('noop', 'w', 1, LEASE);
      expect(await store.fail({ id: job.id, attempt: 3 }, 'boom 3')).toBe('failed');
      expect(await store.getJob(job.id)).toMatchObject({ status: 'failed', lastError: 'boom 3' });
      expect(backoffDelay(1)).toBe(2_000);
      expect(backoffDelay(4)).toBe(16_000);
      expect(backoffDelay(40)).toBe(300_000);
    });

    it('fails at once when the error is not retryable', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue({ kind: 'noop', payload: {} });
      await store.claim('noop', 'w', 1, LEASE);
      expect(await store.fail({ id: job.id, attempt: 1 }, 'bad bundle', { retryable: false })).toBe(
        'failed',
      );
    });

    it('ends a failing job as cancelled when a cancel was requested meanwhile', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue({ kind: 'noop', payload: {} });
      await store.claim('noop', 'w', 1, LEASE);
      await store.cancel([job.id]);
      expect(await store.fail({ id: job.id, attempt: 1 }, 'aborted')).toBe('cancelled');
      expect((await store.getJob(job.id))?.status).toBe('cancelled');
    });

    it('hands a job back on release without spending an attempt', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue({ kind: 'noop', payload: {}, maxAttempts: 1 });
      await store.claim('noop', 'w', 1, LEASE);
      expect(await store.release({ id: job.id, attempt: 1 }, 'shutdown')).toBe(true);
      const [again] = await store.claim('noop', 'w', 1, LEASE);
      expect(again).toMatchObject({ attempt: 2, maxAttempts: 2 });
      expect(await store.fail({ id: job.id, attempt: 2 }, 'x')).toBe('failed');
    });
  });

  describe('reclaim', () => {
    it('fails an expired job that has used all its attempts', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const { job } = await store.enqueue({ kind: 'noop', payload: {}, maxAttempts: 1 });
      await store.claim('noop', 'dead', 1, LEASE);
      clock.advance(LEASE + 1);
      expect(await store.reclaimExpired()).toEqual([
        { id: job.id, attempt: 1, status: 'failed', owner: 'dead' },
      ]);
      expect(await store.getJob(job.id)).toMatchObject({
        status: 'failed',
        lastError: expect.stringContaining('lease expired'),
      });
    });

    it('reclaims a dead owner at once, leaving other owners alone', async () => {
      const store = await kind.open();
      await store.enqueueBatch({
        jobs: Array.from({ length: 4 }, () => ({ kind: 'noop' as const, payload: {} })),
      });
      await store.claim('noop', 'dead', 2, LEASE);
      await store.claim('noop', 'alive', 2, LEASE);
      expect((await store.runningOwners()).sort()).toEqual(['alive', 'dead']);
      const reclaimed = await store.reclaimOwner('dead');
      expect(reclaimed.map((r) => r.status)).toEqual(['queued', 'queued']);
      expect(await store.countByStatus()).toMatchObject({ queued: 2, running: 2 });
      expect(await store.runningOwners()).toEqual(['alive']);
    });
  });

  describe('reclaim of a job whose cancel was requested', () => {
    it('ends it as cancelled instead of running it again', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const { job } = await store.enqueue({ kind: 'noop', payload: {} });
      await store.claim('noop', 'dead', 1, LEASE);
      await store.cancel([job.id]);
      clock.advance(LEASE + 1);
      expect(await store.reclaimExpired()).toEqual([
        { id: job.id, attempt: 1, status: 'cancelled', owner: 'dead' },
      ]);
      expect(await store.getJob(job.id)).toMatchObject({
        status: 'cancelled',
        finishedAt: clock.now(),
      });
    });
  });

  describe('artifact rows', () => {
    it('reads back what a completion registered, by id and by job', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue({ kind: 'noop', payload: {} });
      await store.claim('noop', 'w', 1, LEASE);
      const record = {
        id: '6f1c2f4e-0000-4000-8000-000000000001',
        name: 'oracle.log',
        mediaType: 'text/plain',
        sha256: 'b'.repeat(64),
        size: 10,
        relPath: '6f1c2f4e-0000-4000-8000-000000000001/oracle.log',
      };
      await store.complete({ id: job.id, attempt: 1 }, null, [record]);
      expect(await store.getArtifact(record.id)).toMatchObject({
        ...record,
        jobId: job.id,
        attempt: 1,
      });
      expect(await store.listArtifacts(job.id)).toEqual([expect.objectContaining(record)]);
      expect(await store.getArtifact('nope')).toBeUndefined();
    });
  });
}
