// Claims and plain completions that arrive together on one PostgreSQL store share one
// statement (src/queue/pg/coalesce.ts): each request still gets exactly its own answer.
import { describe, expect, it } from 'vitest';
import type { OutcomeClass } from '../../src/queue/index.js';
import { tempPgStore } from '../helpers/postgres.js';

describe('PgJobStore coalescing', () => {
  it('hands concurrent claims distinct jobs, each at most its own limit, in claim order', async () => {
    const store = await tempPgStore();
    const { jobIds } = await store.enqueueBatch({
      jobs: Array.from({ length: 10 }, (_, i) => ({
        kind: 'noop' as const,
        payload: { tag: `t${i}` },
        priority: i % 2,
      })),
    });
    const answers = await Promise.all(
      [1, 2, 3, 1, 2, 4].map((n) => store.claim('noop', 'w', n, 60_000)),
    );
    expect(answers.map((a) => a.length)).toEqual([1, 2, 3, 1, 2, 1]);
    const ids = answers.flat().map((j) => j.id);
    expect(new Set(ids).size).toBe(10);
    expect([...ids].sort((a, b) => a - b)).toEqual(jobIds);
    // Priority first, then age: the odd-indexed (priority 1) jobs went to the first requests.
    expect(answers.flat().map((j) => j.priority)).toEqual([1, 1, 1, 1, 1, 0, 0, 0, 0, 0]);
    expect(await store.claim('noop', 'w', 5, 60_000)).toEqual([]);
  });

  it('answers each concurrent completion by its own lease: won, lost, or named twice', async () => {
    const store = await tempPgStore();
    await store.enqueueBatch({
      jobs: Array.from({ length: 4 }, (_, i) => ({
        kind: 'noop' as const,
        payload: { tag: `t${i}` },
      })),
    });
    const [a, b, c, d] = (await store.claim('noop', 'w', 4, 60_000)).map((j) => ({
      id: j.id,
      attempt: j.attempt,
    }));
    await store.cancel([c!.id]);
    expect(await store.markCancelled(c!)).toBe(true);
    const answers = await Promise.all([
      store.complete(a!, { n: 'a' }),
      store.complete({ id: b!.id, attempt: b!.attempt + 1 }, { n: 'stale' }),
      store.complete(b!, { n: 'b' }),
      store.complete(c!, { n: 'c' }),
      store.complete(d!, { n: 'd1' }),
      store.complete(d!, { n: 'd2' }),
    ]);
    expect(answers).toEqual([true, false, true, false, true, false]);
    expect((await store.getJob(a!.id))?.result).toEqual({ n: 'a' });
    expect((await store.getJob(b!.id))?.result).toEqual({ n: 'b' });
    expect(await store.getJob(c!.id)).toMatchObject({ status: 'cancelled', result: null });
    expect((await store.getJob(d!.id))?.result).toEqual({ n: 'd1' });
    expect(await store.countByStatus()).toMatchObject({ done: 3, cancelled: 1, running: 0 });
  });

  it('fails only the completion PostgreSQL refuses, and records the others that came with it', async () => {
    const store = await tempPgStore();
    await store.enqueueBatch({
      jobs: Array.from({ length: 3 }, (_, i) => ({
        kind: 'noop' as const,
        payload: { tag: `t${i}` },
      })),
    });
    const [a, b, c] = (await store.claim('noop', 'w', 3, 60_000)).map((j) => ({
      id: j.id,
      attempt: j.attempt,
    }));
    const answers = await Promise.allSettled([
      store.complete(a!, { n: 'a' }),
      // Not one of the outcome classes: the table's CHECK refuses it.
      store.complete(b!, { n: 'b' }, [], { outcome: 'bogus' as OutcomeClass }),
      store.complete(c!, { n: 'c' }),
    ]);
    expect(answers.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((answers[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    expect(await store.countByStatus()).toMatchObject({ done: 2, running: 1 });
    expect(await store.complete(b!, { n: 'b' })).toBe(true);
  });
});
