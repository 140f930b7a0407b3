// Cleanup off the job's path: a handler's deferred cleanup (JobContext.defer) runs after the
// job's end is recorded, does not hold the job's slot unless too many are pending, and is
// drained by stop().
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/logger.js';
import { createWorkerPool, type JobHandler } from '../../src/workers/index.js';
import { onCleanup, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

/** A promise with its resolve, for cleanups that finish when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('deferred cleanup', () => {
  it('runs after the verdict is recorded, and the next job starts before it ends', async () => {
    const store = tempStore();
    const release = gate();
    const seen: string[] = [];
    const handler: JobHandler = async (context) => {
      seen.push(`run ${context.job.id}`);
      context.defer(async () => {
        const row = await store.getJob(context.job.id);
        seen.push(`cleanup ${context.job.id} after ${row?.status ?? 'nothing'}`);
        await release.opened;
      });
      return { result: 'ok' };
    };
    const pool = createWorkerPool({
      store,
      clock: systemClock,
      logger: silentLogger,
      handlers: { noop: handler },
      concurrency: { noop: 1 },
      pollMs: 20,
    });
    onCleanup(async () => {
      release.open();
      await pool.stop({ graceMs: 0 });
    });
    await store.enqueue({ kind: 'noop', payload: {} });
    await store.enqueue({ kind: 'noop', payload: {} });
    await pool.start();
    // One slot, and job 1's cleanup never ends until the gate opens: job 2 ran beside it.
    await waitFor(async () => (await store.countByStatus()).done === 2, { what: 'two jobs done' });
    await waitFor(() => seen.includes('cleanup 1 after done'), { what: "job 1's cleanup" });
    expect(seen).toEqual(expect.arrayContaining(['run 1', 'run 2', 'cleanup 1 after done']));
    expect(seen.indexOf('run 1')).toBeLessThan(seen.indexOf('cleanup 1 after done'));
    release.open();
  });

  it('holds the slot when the pending cleanups are full, and stop() waits for them all', async () => {
    const store = tempStore();
    const release = gate();
    let finished = 0;
    const handler: JobHandler = async (context) => {
      context.defer(async () => {
        await release.opened;
        finished += 1;
      });
      return { result: 'ok' };
    };
    const pool = createWorkerPool({
      store,
      clock: systemClock,
      logger: silentLogger,
      handlers: { noop: handler },
      concurrency: { noop: 1 },
      pollMs: 20,
      maxPendingCleanups: 1,
    });
    onCleanup(() => pool.stop({ graceMs: 0 }));
    for (let i = 0; i < 5; i++) await store.enqueue({ kind: 'noop', payload: {} });
    await pool.start();
    // One cleanup runs and one waits; the third job's end is recorded but its slot is held,
    // so no fourth job starts until the gate opens.
    await waitFor(async () => (await store.countByStatus()).done === 3, { what: 'three done' });
    const counts = await store.countByStatus();
    expect(counts.queued).toBe(2);
    expect(pool.runningCount()).toBe(0);
    release.open();
    await waitFor(async () => (await store.countByStatus()).done === 5, { what: 'five done' });
    await pool.stop({ graceMs: 0 });
    expect(finished).toBe(5);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() =>
      createWorkerPool({
        store: tempStore(),
        clock: systemClock,
        logger: silentLogger,
        handlers: {},
        concurrency: {},
        maxPendingCleanups: 0,
      }),
    ).toThrow('Expected `maxPendingCleanups` to be an integer >= 1, got `0`');
  });
});
