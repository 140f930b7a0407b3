import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import type { JobStore } from '../../../src/queue/index.js';
import { MAX_TEST_STATUS_JOBS } from '../../../src/queue/store.js';
import type { StoreKind } from '../../helpers/stores.js';

export function testStatusCases(kind: StoreKind): void {
  const doc = (id: string) => ({
    v: 1,
    hidden: {
      state: 'reported',
      groups: [{ outcome: 'failed', swebench: 'FAILED', count: 1, ids: [id] }],
    },
    existing: { state: 'not_run', groups: [] },
  });

  async function grade(store: JobStore, tests?: unknown, attempt = 1) {
    const { job } = await store.enqueue({
      kind: 'grade',
      payload: { bundle: '/b', candidate: 'c' },
    });
    await store.claim('grade', 'w', 1, 60_000);
    const done = await store.complete(
      { id: job.id, attempt },
      { verdict: 'FAIL', reason: 'HIDDEN_FAILED' },
      [],
      tests === undefined ? {} : { tests },
    );
    return { id: job.id, done };
  }

  describe('per-test statuses', () => {
    it('are stored with the completion and read back by job, and a job without any is absent', async () => {
      const store = await kind.open();
      const a = await grade(store, doc('test_a'));
      const b = await grade(store);
      expect(a.done && b.done).toBe(true);
      const read = await store.testStatuses([a.id, b.id, 999]);
      expect([...read.keys()]).toEqual([a.id]);
      expect(JSON.parse(read.get(a.id) ?? 'null')).toEqual(doc('test_a'));
      expect(await store.testStatuses([])).toEqual(new Map());
    });

    it('are not stored by a completion that lost its lease', async () => {
      const store = await kind.open();
      const lost = await grade(store, doc('test_a'), 2);
      expect(lost.done).toBe(false);
      expect(await store.testStatuses([lost.id])).toEqual(new Map());
    });

    it('go with their job when it is pruned', async () => {
      const clock = manualClock(1_000);
      const store = await kind.open({ clock });
      const a = await grade(store, doc('test_a'));
      clock.advance(10_000);
      expect(await store.pruneFinished(clock.now())).toBe(1);
      expect(await store.testStatuses([a.id])).toEqual(new Map());
    });

    it(`refuses more than ${MAX_TEST_STATUS_JOBS} jobs in one read, in one line`, async () => {
      const store = await kind.open();
      const ids = Array.from({ length: MAX_TEST_STATUS_JOBS + 1 }, (_, i) => i + 1);
      await expect(store.testStatuses(ids)).rejects.toThrow(
        `testStatuses: at most ${MAX_TEST_STATUS_JOBS} jobs per call, got ${MAX_TEST_STATUS_JOBS + 1}`,
      );
    });

    it('keep a document of thousands of long IDs whole', async () => {
      const store = await kind.open();
      const ids = Array.from(
        { length: 5_000 },
        (_, i) => `tests/test_x.py::test_${i}[${'p'.repeat(100)}]`,
      );
      const big = {
        v: 1,
        hidden: {
          state: 'reported',
          groups: [{ outcome: 'passed', swebench: null, count: ids.length, ids }],
        },
        existing: { state: 'reported', groups: [] },
      };
      const a = await grade(store, big);
      expect(JSON.parse((await store.testStatuses([a.id])).get(a.id) ?? 'null')).toEqual(big);
    });
  });
}
