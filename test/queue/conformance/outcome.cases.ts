// Outcome classes and the cost cap, against both stores: the outcome column written in the
// same fenced write as a completion or failure (never on a retry, a cancel or a late write),
// 'error' for a grade or solve whose worker was lost on its last attempt, the closed set and
// finished-only checks kept by the database itself, checkBudget's cancels at the cap, and a
// task's judgement for one bundle content.
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import type { JobStore } from '../../../src/queue/index.js';
import type { PgJobStore } from '../../../src/queue/pg/store.js';
import type { SqliteJobStore } from '../../../src/queue/sqlite/store.js';
import type { StoreKind } from '../../helpers/stores.js';

const LEASE = 60_000;

const solve = (n: number) => ({
  kind: 'solve' as const,
  payload: { bundle: `/t/${n}`, solver: 'm' },
});

async function batchOf(
  store: JobStore,
  count: number,
  extra: Parameters<JobStore['enqueueBatch']>[0]['jobs'] = [],
) {
  const { batch, jobIds } = await store.enqueueBatch({
    jobs: [...Array.from({ length: count }, (_, i) => solve(i)), ...extra],
  });
  return { batchId: batch!.id, ids: jobIds };
}

/** Claims the next solve and completes it with this cost. */
async function spend(store: JobStore, costUsd: number | null) {
  const [job] = await store.claim('solve', 'w', 1, 60_000);
  await store.complete({ id: job!.id, attempt: job!.attempt }, { verdict: 'FAIL', costUsd });
  return job!.id;
}

const grade = { kind: 'grade' as const, payload: { bundle: '/b', candidate: 'c' } };

async function claimed(store: JobStore, jobKind: 'grade' | 'noop' = 'grade') {
  const [job] = await store.claim(jobKind, 'w', 1, LEASE);
  if (!job) throw new Error('nothing claimed');
  return { id: job.id, attempt: job.attempt };
}

export function outcomeCases(kind: StoreKind): void {
  describe('checkBudget', () => {
    it('lets a solve start while the spend is below the cap, and changes nothing', async () => {
      const store = await kind.open();
      const { batchId } = await batchOf(store, 3);
      await spend(store, 0.75);
      await spend(store, null); // no prices or no usage: adds nothing
      const [starting] = await store.claim('solve', 'w', 1, 60_000);
      const lease = { id: starting!.id, attempt: 1 };
      expect(await store.checkBudget(batchId, 1, lease)).toEqual({
        spentUsd: 0.75,
        stopped: false,
        cancelled: 0,
      });
      expect(await store.getJob(starting!.id)).toMatchObject({ status: 'running' });
    });

    it('at the cap, ends the starting solve and the queued ones as cancelled BUDGET, and no other job', async () => {
      const store = await kind.open();
      const { batchId, ids } = await batchOf(store, 5, [{ kind: 'noop', payload: {} }]);
      const other = await batchOf(store, 1);
      await spend(store, 0.6);
      await spend(store, 0.4);
      const [running, starting] = await store.claim('solve', 'w', 2, 60_000);
      const check = await store.checkBudget(batchId, 1, { id: starting!.id, attempt: 1 });
      expect(check).toEqual({ spentUsd: 1, stopped: true, cancelled: 2 });

      const jobs = await Promise.all(ids.map((id) => store.getJob(id)));
      expect(jobs.map((j) => [j!.kind, j!.status, j!.errorCode])).toEqual([
        ['solve', 'done', null],
        ['solve', 'done', null],
        ['solve', 'running', null], // running ones finish
        ['solve', 'cancelled', 'BUDGET'], // the starting one
        ['solve', 'cancelled', 'BUDGET'], // the queued one
        ['noop', 'queued', null],
      ]);
      expect(running!.id).toBe(ids[2]);
      const ended = jobs[3]!;
      expect(ended.lastError).toBe(
        'BUDGET: the batch has spent $1.0000, reaching its cost cap of $1',
      );
      expect(ended).toMatchObject({ leaseOwner: null, leaseExpiresAt: null });
      expect(ended.finishedAt).not.toBeNull();
      expect(await store.getJob(other.ids[0]!)).toMatchObject({ status: 'queued' });
      // The starting solve's own end cannot be overwritten by its worker.
      expect(await store.fail({ id: starting!.id, attempt: 1 }, 'x')).toBe('lost');
      expect(await store.countByStatus({ batchId })).toMatchObject({ cancelled: 2, queued: 1 });
    });

    it('leaves a starting solve whose lease was lost alone', async () => {
      const store = await kind.open();
      const { batchId, ids } = await batchOf(store, 2);
      await spend(store, 2);
      await store.claim('solve', 'w', 1, 60_000);
      const check = await store.checkBudget(batchId, 1, { id: ids[1]!, attempt: 7 });
      expect(check).toEqual({ spentUsd: 2, stopped: true, cancelled: 0 });
      expect(await store.getJob(ids[1]!)).toMatchObject({ status: 'running' });
    });
  });

  describe('the outcome column', () => {
    it('is stored with a completion, and null before it', async () => {
      const store = await kind.open();
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
      const store = await kind.open({ clock });
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
      const store = await kind.open({ clock });
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
      const store = await kind.open();
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
      const store = await kind.open({ clock });
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
  });

  describe('outcome checks', () => {
    it('is a closed set, and only for finished jobs, by the database itself', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue(grade);
      const set = async (outcome: string) => {
        if (kind.name === 'sqlite') {
          (store as SqliteJobStore).database.sqlite
            .prepare('UPDATE jobs SET outcome = ? WHERE id = ?')
            .run(outcome, job.id);
        } else {
          const pool = await (store as PgJobStore).pool();
          await pool.query('UPDATE jobs SET outcome = $1 WHERE id = $2', [outcome, job.id]);
        }
      };
      await expect(set('great')).rejects.toThrow(/jobs_outcome_known/);
      await expect(set('resolved')).rejects.toThrow(/jobs_outcome_when_finished/);
    });
  });

  describe('task judgement', () => {
    it('is the judgement of exactly one task id and bundle content, or undefined', async () => {
      const store = await kind.open();
      const sha = (c: string) => c.repeat(64);
      const { job } = await store.enqueue({ kind: 'baseline', payload: { bundle: '/suite/a' } });
      const [claimedJob] = await store.claim('baseline', 'w', 1, LEASE);
      expect(claimedJob?.id).toBe(job.id);
      const task = {
        taskId: 'a',
        contentHash: sha('a'),
        bundlePath: '/suite/a',
        validity: 'quarantined' as const,
        reason: 'GOLD_FAILED',
        detail: 'gold patch does not pass',
      };
      expect(
        await store.complete({ id: job.id, attempt: 1 }, { verdict: 'FAIL' }, [], { task }),
      ).toBe(true);
      expect(await store.taskJudgement('a', sha('a'))).toMatchObject({ ...task, jobId: job.id });
      expect(await store.taskJudgement('a', sha('b'))).toBeUndefined();
      expect(await store.taskJudgement('b', sha('a'))).toBeUndefined();
    });
  });
}
