import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import type { JobStore, TaskValidityInput } from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

export function taskCases(kind: StoreKind): void {
  const sha = (c: string) => c.repeat(64);
  const record = { id: '', name: 'candidate.diff', mediaType: 'text/x-diff', size: 3, relPath: '' };

  function task(taskId: string, validity: 'valid' | 'quarantined', hash = 'a'): TaskValidityInput {
    return {
      taskId,
      contentHash: sha(hash),
      bundlePath: `/suite/${taskId}`,
      validity,
      reason: validity === 'valid' ? 'PASS' : 'GOLD_FAILED',
      detail: validity === 'valid' ? 'sound' : 'gold patch does not pass',
    };
  }

  async function baseline(store: JobStore, input: TaskValidityInput, verdict: 'PASS' | 'FAIL') {
    const { job } = await store.enqueue({
      kind: 'baseline',
      payload: { bundle: input.bundlePath },
    });
    const [claimed] = await store.claim('baseline', 'w', 1, 60_000);
    expect(claimed?.id).toBe(job.id);
    expect(await store.complete({ id: job.id, attempt: 1 }, { verdict }, [], { task: input })).toBe(
      true,
    );
    return job.id;
  }

  describe('task validity', () => {
    it("keeps each task's latest judgement with the completion that made it, and counts them", async () => {
      const clock = manualClock(1_000);
      const store = await kind.open({ clock });
      const a = await baseline(store, task('a', 'valid'), 'PASS');
      clock.advance(10);
      await baseline(store, task('b', 'quarantined'), 'FAIL');
      clock.advance(10);
      // A changed bundle of task a is judged afresh; its latest judgement wins.
      const a2 = await baseline(store, task('a', 'quarantined', 'b'), 'FAIL');
      const { tasks, counts } = await store.taskValidity();
      expect(counts).toEqual({ valid: 0, quarantined: 2 });
      expect(tasks.map((t) => [t.taskId, t.validity, t.jobId])).toEqual([
        ['a', 'quarantined', a2],
        ['b', 'quarantined', a + 1],
      ]);
      expect(await store.countByVerdict({ kind: 'baseline' })).toEqual({ PASS: 1, FAIL: 2 });
    });

    it('records nothing for a completion that lost its lease', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue({ kind: 'baseline', payload: { bundle: '/x' } });
      await store.claim('baseline', 'w', 1, 60_000);
      expect(
        await store.complete({ id: job.id, attempt: 2 }, {}, [], { task: task('x', 'valid') }),
      ).toBe(false);
      expect((await store.taskValidity()).tasks).toEqual([]);
    });

    it('refuses a validity outside valid/quarantined in the database itself', async () => {
      const store = await kind.open();
      const { job } = await store.enqueue({ kind: 'baseline', payload: { bundle: '/x' } });
      await store.claim('baseline', 'w', 1, 60_000);
      const bad = { ...task('x', 'valid'), validity: 'maybe' as 'valid' };
      await expect(
        store.complete({ id: job.id, attempt: 1 }, {}, [], { task: bad }),
      ).rejects.toThrow(/CHECK constraint failed|violates check constraint/);
      // The whole completion rolled back: the job still runs.
      expect(await store.getJob(job.id)).toMatchObject({ status: 'running' });
    });
  });

  describe('input artifacts', () => {
    it('registers artifacts that no job owns, readable by id', async () => {
      const store = await kind.open();
      const input = {
        ...record,
        id: '0b13c902-732b-46f5-bb41-fde870d0ba15',
        sha256: sha('c'),
        relPath: '0b13c902-732b-46f5-bb41-fde870d0ba15/candidate.diff',
      };
      await store.addInputs([input]);
      expect(await store.getArtifact(input.id)).toMatchObject({
        ...input,
        jobId: null,
        attempt: null,
      });
      await expect(store.addInputs([{ ...input, id: 'other', sha256: 'not-hex' }])).rejects.toThrow(
        /CHECK constraint failed|violates check constraint/,
      );
    });
  });

  describe('children of a completion', () => {
    it('enqueues them with the completion, parented to it, and not at all when the lease is lost', async () => {
      const store = await kind.open();
      const { jobIds } = await store.enqueueBatch({
        jobs: [
          { kind: 'solve', payload: { bundle: '/t', solver: 'mini' } },
          { kind: 'solve', payload: { bundle: '/u', solver: 'mini' } },
        ],
      });
      await store.claim('solve', 'w', 2, 60_000);
      const child = { kind: 'grade' as const, payload: { bundle: '/t', candidate: 'c1' } };
      expect(
        await store.complete({ id: jobIds[0]!, attempt: 1 }, {}, [], { children: [child] }),
      ).toBe(true);
      expect(
        await store.complete({ id: jobIds[1]!, attempt: 9 }, {}, [], { children: [child] }),
      ).toBe(false);
      const grades = (await store.listJobs({ kind: 'grade' })).items;
      expect(grades.map((g) => [g.parentId, g.status, g.payload])).toEqual([
        [jobIds[0], 'queued', { bundle: '/t', candidate: 'c1' }],
      ]);
      // A child that does not validate is refused before anything is written.
      await expect(
        store.complete({ id: jobIds[1]!, attempt: 1 }, {}, [], {
          children: [{ kind: 'grade', payload: { bundle: '/t' } } as never],
        }),
      ).rejects.toThrow(/children\[0\]\.payload/);
      expect(await store.getJob(jobIds[1]!)).toMatchObject({ status: 'running' });
    });
  });
}
