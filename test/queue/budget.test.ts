// The cost cap of a batch: checkBudget sums the batch's done solves' costUsd and, once the cap
// is reached, ends the starting solve and the batch's queued solves as cancelled (BUDGET) in
// one transaction, leaving running solves, other kinds and other batches alone.
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/queue/index.js';
import { tempStore } from '../helpers/temp.js';

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

describe('checkBudget', () => {
  it('lets a solve start while the spend is below the cap, and changes nothing', async () => {
    const store = tempStore();
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
    const store = tempStore();
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
    const store = tempStore();
    const { batchId, ids } = await batchOf(store, 2);
    await spend(store, 2);
    await store.claim('solve', 'w', 1, 60_000);
    const check = await store.checkBudget(batchId, 1, { id: ids[1]!, attempt: 7 });
    expect(check).toEqual({ spentUsd: 2, stopped: true, cancelled: 0 });
    expect(await store.getJob(ids[1]!)).toMatchObject({ status: 'running' });
  });
});
