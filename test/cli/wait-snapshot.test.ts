// The `--wait` loop's snapshot of a batch: its verdict counts are a scan of the batch's results,
// read again only when a job of the batch ended or after VERDICTS_EVERY_MS, and not at all
// without a progress line. A real SQLite store in a temp folder; the store is wrapped only to
// count the scans.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshot, VERDICTS_EVERY_MS, type VerdictCache } from '../../src/cli/wait.js';
import { openSqliteJobStore, type JobStore } from '../../src/queue/index.js';
import { systemClock } from '../../src/clock.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

function counted(store: JobStore): { store: JobStore; scans: () => number } {
  let scans = 0;
  const wrapped = Object.create(store) as JobStore;
  wrapped.countByVerdict = (filter) => {
    scans += 1;
    return store.countByVerdict(filter);
  };
  return { store: wrapped, scans: () => scans };
}

describe('the --wait snapshot of a batch', () => {
  it('scans the verdicts again only when a job ended, or after a while, and never without a line', async () => {
    const real = openSqliteJobStore(join(tempDir(), 'proctor.db'), { clock: systemClock });
    onCleanup(() => real.close());
    const { store, scans } = counted(real);
    const { batch } = await real.enqueueBatch({
      jobs: ['a', 'b', 'c'].map((c) => ({
        kind: 'grade' as const,
        payload: { bundle: '/b', candidate: c },
      })),
    });
    const target = {
      batchId: batch!.id,
      label: 'batch',
      verdictNames: { PASS: 'PASS', FAIL: 'FAIL' },
    } as Parameters<typeof snapshot>[1];
    const cache: { verdicts: VerdictCache | null } = { verdicts: null };
    const t0 = 1_000_000;

    expect((await snapshot(store, target, t0, cache)).verdicts).toEqual({});
    expect(scans()).toBe(1);
    // Nothing ended: the counts stand.
    await snapshot(store, target, t0 + 200, cache);
    expect(scans()).toBe(1);

    // A claim moves the status counts: read again (nothing new, but no guess either).
    const [first, second] = await real.claim('grade', 'w', 2, 60_000);
    await snapshot(store, target, t0 + 400, cache);
    expect(scans()).toBe(2);
    await real.complete(first!, { verdict: 'PASS' });
    const s = await snapshot(store, target, t0 + 600, cache);
    expect(scans()).toBe(3);
    expect(s.verdicts).toEqual({ PASS: 1 });
    expect(s.finished).toBe(1);
    await snapshot(store, target, t0 + 800, cache);
    expect(scans()).toBe(3);

    // The same status counts after VERDICTS_EVERY_MS: read again.
    await snapshot(store, target, t0 + 600 + VERDICTS_EVERY_MS, cache);
    expect(scans()).toBe(4);

    await real.complete(second!, { verdict: 'FAIL' });
    expect(
      (await snapshot(store, target, t0 + 600 + VERDICTS_EVERY_MS + 1, cache)).verdicts,
    ).toEqual({
      PASS: 1,
      FAIL: 1,
    });
    expect(scans()).toBe(5);

    // Without a progress line, never: the counts are not shown.
    const plain = await snapshot(store, target, t0 + 2 * VERDICTS_EVERY_MS, null);
    expect(plain.verdicts).toEqual({});
    expect(plain.finished).toBe(2);
    expect(scans()).toBe(5);
  });
});
