import { describe, expect, it } from 'vitest';
import { manualClock } from '../../../src/clock.js';
import { isProctorError } from '../../../src/errors.js';
import { progressFigures } from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

export function listCases(kind: StoreKind): void {
  describe('listing', () => {
    it('pages through every job with a cursor, newest first by default', async () => {
      const store = await kind.open();
      const { jobIds } = await store.enqueueBatch({
        jobs: Array.from({ length: 45 }, () => ({ kind: 'noop' as const, payload: {} })),
      });
      const seen: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listJobs({}, { limit: 20, ...(cursor ? { cursor } : {}) });
        expect(page.items.length).toBeLessThanOrEqual(20);
        seen.push(...page.items.map((j) => j.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toEqual([...jobIds].reverse());
      const asc = await store.listJobs({}, { limit: 200, order: 'asc' });
      expect(asc.items.map((j) => j.id)).toEqual(jobIds);
      expect(asc.nextCursor).toBeNull();
    });

    it('filters by status, kind and batch', async () => {
      const store = await kind.open();
      const one = await store.enqueueBatch({
        jobs: [
          { kind: 'noop', payload: {} },
          { kind: 'noop', payload: {} },
        ],
      });
      await store.enqueueBatch({ jobs: [{ kind: 'baseline', payload: { bundle: '/x' } }] });
      await store.claim('noop', 'w', 1, 60_000);
      expect((await store.listJobs({ batchId: one.batch!.id })).items).toHaveLength(2);
      expect((await store.listJobs({ kind: 'baseline' })).items).toHaveLength(1);
      expect((await store.listJobs({ status: 'running' })).items.map((j) => j.id)).toEqual([
        one.jobIds[0],
      ]);
    });

    it('refuses pages beyond the bound and forged cursors', async () => {
      const store = await kind.open();
      await expect(store.listJobs({}, { limit: 201 })).rejects.toSatisfy((e) =>
        isProctorError(e, 'USAGE'),
      );
      await expect(store.listJobs({}, { limit: 0 })).rejects.toSatisfy((e) =>
        isProctorError(e, 'USAGE'),
      );
      await expect(store.listJobs({}, { cursor: 'garbage' })).rejects.toSatisfy((e) =>
        isProctorError(e, 'CURSOR_INVALID'),
      );
      const asc = Buffer.from(JSON.stringify(['asc', 3])).toString('base64url');
      await expect(store.listJobs({}, { cursor: asc, order: 'desc' })).rejects.toSatisfy((e) =>
        isProctorError(e, 'CURSOR_INVALID'),
      );
    });

    it('pages batches by age', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(
          (
            await store.enqueueBatch({
              label: `b${i}`,
              jobs: [{ kind: 'noop', payload: { tag: String(i) } }],
            })
          ).batch!.id,
        );
        clock.advance(1000);
      }
      const first = await store.listBatches({ limit: 3 });
      const second = await store.listBatches({ limit: 3, cursor: first.nextCursor! });
      expect([...first.items, ...second.items].map((b) => b.id)).toEqual([...ids].reverse());
      expect(second.nextCursor).toBeNull();
    });
  });

  describe('counts and progress', () => {
    it('counts by status overall and per batch, with a rate and an ETA', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const { batch, jobIds } = await store.enqueueBatch({
        jobs: Array.from({ length: 10 }, () => ({ kind: 'noop' as const, payload: {} })),
      });
      await store.enqueue({ kind: 'noop', payload: { tag: 'elsewhere' } });
      const claimed = await store.claim('noop', 'w', 4, 60_000);
      clock.advance(30_000);
      for (const job of claimed.slice(0, 3)) await store.complete({ id: job.id, attempt: 1 }, null);
      await store.cancel([jobIds[9]!]);
      expect(await store.countByStatus()).toEqual({
        queued: 6,
        running: 1,
        done: 3,
        failed: 0,
        cancelled: 1,
      });
      const progress = await store.batchProgress(batch!.id);
      expect(progress.counts).toEqual({ queued: 5, running: 1, done: 3, failed: 0, cancelled: 1 });
      const figures = progressFigures(progress, clock.now());
      expect(figures).toMatchObject({ total: 10, finished: 4, remaining: 6 });
      // 4 finished in the 30 s since the first claim: 8 per minute, so 6 more take 45 s.
      expect(figures.ratePerMinute).toBeCloseTo(8);
      expect(figures.etaSeconds).toBe(45);
    });
  });

  describe('verdict counts', () => {
    it('count done jobs by verdict, and validate jobs by validity', async () => {
      const store = await kind.open();
      const { batch } = await store.enqueueBatch({
        jobs: [
          { kind: 'grade', payload: { bundle: '/b', candidate: 'c' } },
          ...['/a', '/b', '/c'].map((bundle) => ({
            kind: 'validate' as const,
            payload: { bundle },
          })),
        ],
      });
      const [grade] = await store.claim('grade', 'w', 1, 60_000);
      await store.complete(grade!, { verdict: 'PASS' });
      const validates = await store.claim('validate', 'w', 3, 60_000);
      for (const [i, job] of validates.entries()) {
        await store.complete(job, { validity: i === 0 ? 'invalid' : 'valid' });
      }
      expect(await store.countByVerdict({ batchId: batch!.id })).toEqual({
        PASS: 1,
        valid: 2,
        invalid: 1,
      });
      expect(await store.countByVerdict({ kind: 'validate' })).toEqual({ valid: 2, invalid: 1 });
    });
  });

  describe('retention', () => {
    it('prunes only finished jobs older than the cut-off, in bounded chunks', async () => {
      const clock = manualClock();
      const store = await kind.open({ clock });
      const { jobIds } = await store.enqueueBatch({
        jobs: Array.from({ length: 6 }, () => ({ kind: 'noop' as const, payload: {} })),
      });
      await store.claim('noop', 'w', 5, 60_000);
      for (const id of jobIds.slice(0, 4)) await store.complete({ id, attempt: 1 }, null);
      clock.advance(10_000);
      await store.complete({ id: jobIds[4]!, attempt: 1 }, null);
      expect(await store.pruneFinished(clock.now() - 5_000, 3)).toBe(3);
      expect(await store.pruneFinished(clock.now() - 5_000, 3)).toBe(1);
      expect(await store.pruneFinished(clock.now() - 5_000, 3)).toBe(0);
      expect(await store.countByStatus()).toMatchObject({ done: 1, queued: 1, running: 0 });
    });

    it("pages a batch's jobs of one status as compact rows, in id order", async () => {
      const store = await kind.open();
      const { batch, jobIds } = await store.enqueueBatch({
        jobs: Array.from({ length: 7 }, () => ({
          kind: 'noop' as const,
          payload: {},
        })),
      });
      const other = await store.enqueueBatch({ jobs: [{ kind: 'noop' as const, payload: {} }] });
      const [first] = await store.claim('noop', 'w', 1, 60_000);
      await store.complete({ id: first!.id, attempt: 1 }, { verdict: 'PASS', n: 1 });
      const id = batch!.id;

      const done = await store.listBatchJobs(id, 'done');
      expect(done).toEqual([
        {
          id: jobIds[0],
          kind: 'noop',
          status: 'done',
          parentId: null,
          payload: expect.any(String) as unknown,
          result: expect.any(String) as unknown,
          errorCode: null,
          startedAt: expect.any(Number) as unknown,
          finishedAt: expect.any(Number) as unknown,
          outcome: null,
          childId: null,
          childStatus: null,
          childResult: null,
          childErrorCode: null,
          childStartedAt: null,
          childFinishedAt: null,
          childOutcome: null,
        },
      ]);
      expect(JSON.parse(done[0]!.payload)).toEqual({ sleepMs: 0, failAttempts: 0 });
      expect(JSON.parse(done[0]!.result!)).toEqual({ verdict: 'PASS', n: 1 });

      const seen: number[] = [];
      let after = 0;
      for (;;) {
        const page = await store.listBatchJobs(id, 'queued', { after, limit: 4 });
        seen.push(...page.map((row) => row.id));
        if (page.length < 4) break;
        after = page.at(-1)!.id;
      }
      expect(seen).toEqual(jobIds.slice(1));
      const queued = await store.listBatchJobs(id, 'queued', { after: jobIds[1]!, limit: 2 });
      expect(queued.map((row) => [row.result, row.startedAt])).toEqual([
        [null, null],
        [null, null],
      ]);
      expect(await store.listBatchJobs(other.batch!.id, 'done')).toEqual([]);
      expect(await store.listBatchJobs('b_none', 'queued')).toEqual([]);
      await expect(store.listBatchJobs(id, 'queued', { limit: 0 })).rejects.toThrow(
        /page limit must be an integer from 1 to 10000, got 0/,
      );
      await expect(store.listBatchJobs(id, 'queued', { after: -1 })).rejects.toThrow(
        /after must be a job id >= 0/,
      );
    });

    it("records a batch's suite once, and reads it back", async () => {
      const store = await kind.open();
      const { batch } = await store.enqueueBatch({
        jobs: [{ kind: 'noop' as const, payload: {} }],
      });
      const id = batch!.id;
      expect(await store.batchSuite(id)).toBeNull();
      await store.recordBatchSuite(id, ['t-a', 't-b', 't-a']);
      await store.recordBatchSuite(id, ['other']);
      expect(await store.batchSuite(id)).toEqual(['t-a', 't-b']);
      await expect(store.recordBatchSuite('b_none', ['t'])).rejects.toThrow(/no batch b_none/);
      await expect(store.recordBatchSuite(id, [''])).rejects.toThrow(
        /suite task id must be 1 to 200 characters, got ""/,
      );
      await expect(
        store.recordBatchSuite(
          id,
          Array.from({ length: 100_001 }, (_, i) => `t${i}`),
        ),
      ).rejects.toThrow(/at most 100000 tasks, got 100001/);
      expect(await store.batchSuite('b_none')).toBeNull();
    });

    it("joins each solve's newest grade child into its row, in the same read", async () => {
      const store = await kind.open();
      const solve = { kind: 'solve' as const, payload: { bundle: '/b', solver: 'mini' } };
      const { batch, jobIds } = await store.enqueueBatch({ jobs: [solve, solve] });
      const child = { kind: 'grade' as const, payload: { bundle: '/b', candidate: 'c' } };
      const claimed = await store.claim('solve', 'w', 2, 60_000);
      expect(claimed.map((j) => j.id)).toEqual(jobIds);
      // The first solve passed and its grade ran (and was retried once: two children).
      await store.complete({ id: jobIds[0]!, attempt: 1 }, { verdict: 'PASS' }, [], {
        children: [child, child],
      });
      await store.complete(
        { id: jobIds[1]!, attempt: 1 },
        { verdict: 'FAIL', reason: 'SOLVER_LIMIT' },
        [],
        { outcome: 'unresolved' },
      );
      const grades = await store.claim('grade', 'w', 2, 60_000);
      const newest = Math.max(...grades.map((g) => g.id));
      await store.complete(
        { id: newest, attempt: 1 },
        { verdict: 'FAIL', reason: 'HIDDEN_FAILED' },
        [],
        { outcome: 'unresolved' },
      );
      const rows = await store.listBatchJobs(batch!.id, 'done');
      expect(rows.map((r) => [r.id, r.outcome, r.childId, r.childStatus, r.childOutcome])).toEqual([
        [jobIds[0], null, newest, 'done', 'unresolved'],
        [jobIds[1], 'unresolved', null, null, null],
      ]);
      expect(JSON.parse(rows[0]!.childResult!)).toEqual({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
      expect(rows[0]!.childStartedAt).toEqual(expect.any(Number));
      // The grade children are not the batch's own jobs.
      expect(await store.listBatchJobs(batch!.id, 'running')).toEqual([]);
    });
  });
}
