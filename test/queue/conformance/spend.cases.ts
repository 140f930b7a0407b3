// A batch's spend (the `--max-cost` ledger), against both stores: drawCost adds atomically,
// so that concurrent draws from two stores on one database (two processes, or two hosts) each
// count once, and checkBudget counts what was drawn; bad amounts and unknown batches are
// refused with nothing changed.
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../../src/errors.js';
import type { JobStore } from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

const solve = (n: number) => ({
  kind: 'solve' as const,
  payload: { bundle: `/t/${n}`, solver: 'm' },
});

async function batchOf(store: JobStore, count: number) {
  const { batch, jobIds } = await store.enqueueBatch({
    jobs: Array.from({ length: count }, (_, i) => solve(i)),
  });
  return { batchId: batch!.id, ids: jobIds };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isProctorError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}

export function spendCases(kind: StoreKind): void {
  describe("a batch's spend", () => {
    it('starts at nothing and adds each draw, returning the spend after it', async () => {
      const store = await kind.open();
      const { batchId } = await batchOf(store, 1);
      const other = await batchOf(store, 1);
      expect(await store.batchSpent(batchId)).toBe(0);
      expect(await store.drawCost(batchId, 0.25)).toBe(0.25);
      expect(await store.drawCost(batchId, 0)).toBe(0.25);
      expect(await store.drawCost(batchId, 0.5)).toBe(0.75);
      expect(await store.batchSpent(batchId)).toBe(0.75);
      expect(await store.batchSpent(other.batchId)).toBe(0);
    });

    it('counts every one of many concurrent draws from two stores on one database once', async () => {
      const [a, b] = await kind.pair();
      const { batchId } = await batchOf(a, 1);
      // Powers of two: every partial sum is exact, so each draw's answer is one of them.
      const draws = Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).drawCost(batchId, 0.125),
      );
      const seen = await Promise.all(draws);
      expect(await a.batchSpent(batchId)).toBe(5);
      expect(await b.batchSpent(batchId)).toBe(5);
      // Each draw saw the ones before it and none twice: 40 distinct partial sums.
      expect([...seen].sort((x, y) => x - y)).toEqual(
        Array.from({ length: 40 }, (_, i) => (i + 1) * 0.125),
      );
    });

    it('is what checkBudget holds a starting solve to, drawn by running solves before any finished', async () => {
      const [a, b] = await kind.pair();
      const { batchId, ids } = await batchOf(a, 3);
      const [first] = await a.claim('solve', 'w1', 1, 60_000);
      await a.drawCost(batchId, 0.5);
      await b.drawCost(batchId, 0.25);
      const [second] = await b.claim('solve', 'w2', 1, 60_000);
      expect(await b.checkBudget(batchId, 1, { id: second!.id, attempt: 1 })).toEqual({
        spentUsd: 0.75,
        stopped: false,
        cancelled: 0,
      });
      await a.drawCost(batchId, 0.25);
      const [third] = await a.claim('solve', 'w1', 1, 60_000);
      expect(await a.checkBudget(batchId, 1, { id: third!.id, attempt: 1 })).toEqual({
        spentUsd: 1,
        stopped: true,
        cancelled: 1,
      });
      expect((await a.getJob(ids[2]!))?.lastError).toBe(
        'BUDGET: the batch has spent $1.0000, reaching its cost cap of $1',
      );
      expect((await a.getJob(first!.id))?.status).toBe('running');
    });

    it('takes in what done solves recorded beyond what was drawn, once', async () => {
      const store = await kind.open();
      const { batchId } = await batchOf(store, 3);
      // A solve that finished without drawing (recorded before the batch kept its spend).
      const [done] = await store.claim('solve', 'w', 1, 60_000);
      await store.complete({ id: done!.id, attempt: 1 }, { verdict: 'FAIL', costUsd: 0.5 });
      await store.drawCost(batchId, 0.25);
      const [starting] = await store.claim('solve', 'w', 1, 60_000);
      const lease = { id: starting!.id, attempt: 1 };
      expect((await store.checkBudget(batchId, 2, lease)).spentUsd).toBe(0.5);
      expect(await store.batchSpent(batchId)).toBe(0.5);
      // Draws from then on add to it; the done solve is not counted again.
      expect(await store.drawCost(batchId, 0.25)).toBe(0.75);
      expect((await store.checkBudget(batchId, 2, lease)).spentUsd).toBe(0.75);
    });

    it.each([
      ['-0.01', -0.01],
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['"0.5" (a string)', '0.5' as unknown as number],
    ])('refuses a draw of %s with USAGE and changes nothing', async (_, usd) => {
      const shown = String(usd);
      const store = await kind.open();
      const { batchId } = await batchOf(store, 1);
      await store.drawCost(batchId, 0.5);
      expect(await codeOf(store.drawCost(batchId, usd))).toBe(
        `USAGE: drawCost: expected \`usd\` to be a finite number >= 0, got \`${shown}\``,
      );
      expect(await store.batchSpent(batchId)).toBe(0.5);
    });

    it('refuses an unknown batch with BATCH_NOT_FOUND, drawing on no other', async () => {
      const store = await kind.open();
      const { batchId, ids } = await batchOf(store, 1);
      expect(await codeOf(store.drawCost('nope', 1))).toBe('BATCH_NOT_FOUND: no batch nope');
      expect(await codeOf(store.batchSpent('nope'))).toBe('BATCH_NOT_FOUND: no batch nope');
      const lease = { id: ids[0]!, attempt: 1 };
      expect(await codeOf(store.checkBudget('nope', 1, lease))).toBe(
        'BATCH_NOT_FOUND: no batch nope',
      );
      expect(await store.batchSpent(batchId)).toBe(0);
    });
  });
}
