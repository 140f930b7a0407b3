// The outcome column: written in the same fenced transaction as a job's completion or
// failure, never on a retry, a cancel or a late write, and constrained by the database itself.
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { tempStore } from '../helpers/temp.js';

const LEASE = 60_000;
const grade = { kind: 'grade' as const, payload: { bundle: '/b', candidate: 'c' } };

async function claimed(store: ReturnType<typeof tempStore>, kind: 'grade' | 'noop' = 'grade') {
  const [job] = await store.claim(kind, 'w', 1, LEASE);
  if (!job) throw new Error('nothing claimed');
  return { id: job.id, attempt: job.attempt };
}

describe('the outcome column', () => {
  it('is stored with a completion, and null before it', async () => {
    const store = tempStore();
    const { job } = await store.enqueue(grade);
    expect(job.outcome).toBeNull();
    const lease = await claimed(store);
    expect((await store.getJob(job.id))?.outcome).toBeNull();
    const result = { verdict: 'FAIL', reason: 'HIDDEN_FAILED' };
    expect(await store.complete(lease, result, [], { outcome: 'unresolved' })).toBe(true);
    expect(await store.getJob(job.id)).toMatchObject({ status: 'done', outcome: 'unresolved' });
  });

  it('is not written by a late completion of a reclaimed attempt', async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const { job } = await store.enqueue(grade);
    const stale = await claimed(store);
    clock.advance(LEASE + 1);
    await store.reclaimExpired();
    const fresh = await claimed(store);
    expect(await store.complete(stale, { verdict: 'PASS' }, [], { outcome: 'resolved' })).toBe(
      false,
    );
    expect((await store.getJob(job.id))?.outcome).toBeNull();
    await store.complete(fresh, { verdict: 'FAIL' }, [], { outcome: 'unresolved' });
    expect((await store.getJob(job.id))?.outcome).toBe('unresolved');
  });

  it('is stored with a failure that ends the job, never with one that retries', async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const { job } = await store.enqueue({ ...grade, maxAttempts: 2 });
    let lease = await claimed(store);
    expect(
      await store.fail(lease, 'docker went away', { code: 'DOCKER_ERROR', outcome: 'error' }),
    ).toBe('retrying');
    expect(await store.getJob(job.id)).toMatchObject({ status: 'queued', outcome: null });
    clock.advance(60 * 60_000);
    lease = await claimed(store);
    expect(
      await store.fail(lease, 'docker went away', { code: 'DOCKER_ERROR', outcome: 'error' }),
    ).toBe('failed');
    expect(await store.getJob(job.id)).toMatchObject({ status: 'failed', outcome: 'error' });
  });

  it('stays null when a failure ends in a cancel, or a running job is cancelled', async () => {
    const store = tempStore();
    const a = (await store.enqueue(grade)).job;
    const b = (await store.enqueue(grade)).job;
    const leaseA = await claimed(store);
    const leaseB = await claimed(store);
    await store.cancel([a.id, b.id]);
    expect(await store.fail(leaseA, 'boom', { retryable: false, outcome: 'error' })).toBe(
      'cancelled',
    );
    expect(await store.markCancelled(leaseB)).toBe(true);
    for (const id of [a.id, b.id]) {
      expect(await store.getJob(id)).toMatchObject({ status: 'cancelled', outcome: null });
    }
  });

  it('is error for a grade whose worker was lost on its last attempt, and null for other kinds', async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const g = (await store.enqueue({ ...grade, maxAttempts: 1 })).job;
    const n = (await store.enqueue({ kind: 'noop', payload: {}, maxAttempts: 1 })).job;
    const r = (await store.enqueue({ ...grade, payload: { bundle: '/c', candidate: 'c' } })).job;
    await store.claim('grade', 'w', 2, LEASE);
    await store.claim('noop', 'w', 1, LEASE);
    clock.advance(LEASE + 1);
    await store.reclaimExpired();
    expect(await store.getJob(g.id)).toMatchObject({
      status: 'failed',
      outcome: 'error',
      errorCode: 'WORKER_LOST',
    });
    expect(await store.getJob(n.id)).toMatchObject({ status: 'failed', outcome: null });
    expect(await store.getJob(r.id)).toMatchObject({ status: 'queued', outcome: null });
  });

  it('is a closed set, and only for finished jobs, by the database itself', async () => {
    const store = tempStore();
    const { job } = await store.enqueue(grade);
    const set = store.database.sqlite.prepare('UPDATE jobs SET outcome = ? WHERE id = ?');
    expect(() => set.run('great', job.id)).toThrow(/CHECK constraint failed: jobs_outcome_known/);
    expect(() => set.run('resolved', job.id)).toThrow(
      /CHECK constraint failed: jobs_outcome_when_finished/,
    );
  });
});
