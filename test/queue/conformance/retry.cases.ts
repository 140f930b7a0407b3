// The queue side of predictions and retries, against both stores: jobs recorded finished at
// enqueue, jobs added to an existing batch, counts by class over current attempts, and what a
// retry re-runs.
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { isProctorError } from '../../../src/errors.js';
import {
  progressFigures,
  retryKey,
  type EnqueueRequest,
  type JobStore,
} from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

const LEASE = 60_000;
const grade = (candidate: string, extra: Partial<EnqueueRequest> = {}): EnqueueRequest => ({
  kind: 'grade',
  payload: { bundle: '/b', candidate },
  ...extra,
});

async function settle(
  store: JobStore,
  jobKind: 'grade' | 'solve',
  ends: Array<'pass' | 'fail' | 'error' | 'solved'>,
) {
  const claimed = await store.claim(jobKind, 'w', ends.length, LEASE);
  for (const [i, job] of claimed.entries()) {
    const lease = { id: job.id, attempt: job.attempt };
    const end = ends[i];
    if (end === 'error')
      await store.fail(lease, 'docker went away', {
        retryable: false,
        code: 'DOCKER_ERROR',
        outcome: 'error',
      });
    else if (end === 'solved')
      await store.complete(lease, { verdict: 'PASS' }, [], { children: [grade('c')] });
    else
      await store.complete(lease, { verdict: end === 'pass' ? 'PASS' : 'FAIL' }, [], {
        outcome: end === 'pass' ? 'resolved' : 'unresolved',
      });
  }
  return claimed.map((j) => j.id);
}

export function retryCases(kind: StoreKind): void {
  describe('jobs recorded finished at enqueue', () => {
    it('are done in their batch with their result and class, and never claimed', async () => {
      const store = await kind.open();
      const result = { verdict: 'FAIL', reason: 'EMPTY_PATCH' };
      const { batch, jobIds } = await store.enqueueBatch({
        label: 'model-x',
        jobs: [grade('a'), grade('b', { finished: { result, outcome: 'unresolved' } })],
      });
      expect(await store.getJob(jobIds[1] as number)).toMatchObject({
        status: 'done',
        result,
        outcome: 'unresolved',
        attempt: 0,
      });
      expect((await store.getJob(jobIds[1] as number))?.finishedAt).not.toBeNull();
      expect((await store.claim('grade', 'w', 10, LEASE)).map((j) => j.id)).toEqual([jobIds[0]]);
      const progress = await store.batchProgress(batch?.id as string);
      expect(progress.counts).toMatchObject({ done: 1, running: 1 });
      expect(progressFigures(progress, Date.now())).toMatchObject({ total: 2, finished: 1 });
    });

    it('are the only grades without a candidate', async () => {
      const store = await kind.open();
      const bare = { kind: 'grade' as const, payload: { bundle: '/b' } };
      await expect(store.enqueue(bare)).rejects.toThrow(
        /job\.payload\.candidate: required \(only a grade recorded finished at enqueue has none\)/,
      );
      const finished = { result: null, outcome: 'unresolved' as const };
      expect((await store.enqueue({ ...bare, finished })).job.status).toBe('done');
    });

    it('refuse a class outside the four', async () => {
      const store = await kind.open();
      const finished = { result: null, outcome: 'great' } as unknown as EnqueueRequest['finished'];
      await expect(store.enqueue(grade('a', { finished }))).rejects.toThrow(/finished\.outcome/);
    });
  });

  describe('adding jobs to a batch', () => {
    it('grows its total and keeps its label, idempotently by job key', async () => {
      const store = await kind.open();
      const { batch } = await store.enqueueBatch({
        label: 'sweep',
        jobs: [grade('a'), grade('b')],
      });
      const id = batch?.id as string;
      const more = { batchId: id, jobs: [grade('a', { idempotencyKey: retryKey(1) })] };
      const first = await store.enqueueBatch(more);
      expect(first).toMatchObject({
        inserted: 1,
        existing: 0,
        batch: { id, label: 'sweep', total: 3 },
      });
      const again = await store.enqueueBatch(more);
      expect(again).toMatchObject({
        inserted: 0,
        existing: 1,
        jobIds: first.jobIds,
        batch: { total: 3 },
      });
      expect((await store.getJob(first.jobIds[0] as number))?.batchId).toBe(id);
    });

    it('refuses an unknown batch, and a key or label beside batchId', async () => {
      const store = await kind.open();
      const error = await store
        .enqueueBatch({ batchId: 'b_nope', jobs: [grade('a')] })
        .catch((e: unknown) => e);
      expect(isProctorError(error, 'BATCH_NOT_FOUND')).toBe(true);
      expect((await store.countByStatus()).queued).toBe(0);
      const { batch } = await store.enqueueBatch({ jobs: [grade('a')] });
      await expect(
        store.enqueueBatch({ batchId: batch?.id, label: 'x', jobs: [] }),
      ).rejects.toThrow(/keeps its own key and label/);
    });
  });

  describe('outcome counts and retry candidates', () => {
    it('count each current attempt once, a solve as its grade, and list only error jobs', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const { batch, jobIds } = await store.enqueueBatch({
        jobs: ['p', 'f', 'e', 'x'].map((c) => grade(c)),
      });
      const id = batch?.id as string;
      await settle(store, 'grade', ['pass', 'fail', 'error']);
      await store.cancel([jobIds[3] as number]);
      expect(await store.countByOutcome(id)).toEqual({
        resolved: 1,
        unresolved: 1,
        error: 1,
        invalid_task: 0,
        superseded: 0,
      });
      expect((await store.listRetryable(id)).map((j) => j.id)).toEqual([jobIds[2]]);
      expect((await store.listRetryable(id, { cancelled: true })).map((j) => j.id)).toEqual([
        jobIds[2],
        jobIds[3],
      ]);

      // The retry supersedes the error job: it no longer counts, and is not retried again.
      await store.enqueueBatch({
        batchId: id,
        jobs: [grade('e', { idempotencyKey: retryKey(jobIds[2] as number) })],
      });
      expect(await store.countByOutcome(id)).toMatchObject({ error: 0, superseded: 1 });
      expect(await store.listRetryable(id)).toEqual([]);
      await settle(store, 'grade', ['pass']);
      expect(await store.countByOutcome(id)).toMatchObject({ resolved: 2, error: 0 });
    });

    it('take a solve’s class from its grade, and retry the solve when the grade errored', async () => {
      const store = await kind.open();
      const solve = { kind: 'solve' as const, payload: { bundle: '/b', solver: 'mini' } };
      const { batch, jobIds } = await store.enqueueBatch({ jobs: [solve, solve] });
      const id = batch?.id as string;
      await settle(store, 'solve', ['solved', 'solved']);
      expect(await store.countByOutcome(id)).toMatchObject({ resolved: 0, error: 0 });
      await settle(store, 'grade', ['pass', 'error']);
      expect(await store.countByOutcome(id)).toMatchObject({ resolved: 1, error: 1 });
      expect((await store.listRetryable(id)).map((j) => j.id)).toEqual([jobIds[1]]);
    });

    it('refuse an unknown batch', async () => {
      const store = await kind.open();
      for (const read of [store.countByOutcome('b_nope'), store.listRetryable('b_nope')]) {
        expect(isProctorError(await read.catch((e: unknown) => e), 'BATCH_NOT_FOUND')).toBe(true);
      }
    });
  });
}
