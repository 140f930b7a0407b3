import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../../src/errors.js';
import type { StoreKind } from '../../helpers/stores.js';

export function cancelCases(kind: StoreKind): void {
  describe('cancel', () => {
    it('cancels a queued job at once so that it never starts', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue({ kind: 'noop', payload: {} });
      expect(await store.cancel([job.id])).toEqual(new Map([[job.id, 'cancelled']]));
      expect(await store.getJob(job.id)).toMatchObject({ status: 'cancelled' });
      expect(await store.claim('noop', 'w', 10, 60_000)).toEqual([]);
    });

    it('asks a running job to stop, once, and reports finished and unknown jobs', async () => {
      const store = await kind.open();
      const [a, b] = (
        await store.enqueueBatch({
          jobs: [
            { kind: 'noop', payload: {} },
            { kind: 'noop', payload: {} },
          ],
        })
      ).jobIds;
      await store.claim('noop', 'w', 2, 60_000);
      await store.complete({ id: b!, attempt: 1 }, null);
      expect(await store.cancel([a!, b!, 12345])).toEqual(
        new Map([
          [a!, 'cancel_requested'],
          [b!, 'already_finished'],
          [12345, 'not_found'],
        ]),
      );
      expect(await store.cancel([a!])).toEqual(new Map([[a!, 'already_requested']]));
      expect(await store.getJob(a!)).toMatchObject({ status: 'running' });
      expect(await store.markCancelled({ id: a!, attempt: 1 })).toBe(true);
      expect(await store.getJob(a!)).toMatchObject({ status: 'cancelled' });
    });

    it('cancels the unfinished jobs of a batch', async () => {
      const store = await kind.open();
      const { batch, jobIds } = await store.enqueueBatch({
        jobs: Array.from({ length: 5 }, () => ({ kind: 'noop' as const, payload: {} })),
      });
      await store.claim('noop', 'w', 1, 60_000);
      const outcomes = await store.cancelBatch(batch!.id);
      expect([...outcomes.values()].sort()).toEqual([
        'cancel_requested',
        'cancelled',
        'cancelled',
        'cancelled',
        'cancelled',
      ]);
      expect(outcomes.get(jobIds[0]!)).toBe('cancel_requested');
      await expect(store.cancelBatch('b_nope')).rejects.toSatisfy((e) =>
        isProctorError(e, 'BATCH_NOT_FOUND'),
      );
    });
  });
}
