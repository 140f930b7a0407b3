import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../../src/errors.js';
import type { ArtifactRecord, EnqueueRequest, JobStore } from '../../../src/queue/index.js';
import type { StoreKind } from '../../helpers/stores.js';

export function enqueueCases(kind: StoreKind): void {
  const noop = (i: number, extra: Partial<EnqueueRequest> = {}): EnqueueRequest => ({
    kind: 'noop',
    payload: { tag: `t${i}` },
    idempotencyKey: `key-${i}`,
    ...extra,
  });

  async function rejection(promise: Promise<unknown>) {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    throw new Error('expected a rejection');
  }

  describe('enqueue', () => {
    it('stores a queued job with its normalised payload', async () => {
      const store = await kind.open();
      const { job, created } = await store.enqueue({ kind: 'noop', payload: { sleepMs: 5 } });
      expect(created).toBe(true);
      expect(job).toMatchObject({
        kind: 'noop',
        status: 'queued',
        attempt: 0,
        maxAttempts: 3,
        priority: 0,
      });
      expect(job.payload).toEqual({ sleepMs: 5, failAttempts: 0 });
    });

    it("gives a job without maxAttempts the store's default ([queue] max_attempts), and keeps a request's own", async () => {
      const store = await kind.open({ maxAttempts: 1 });
      const one = await store.enqueue({ kind: 'noop', payload: {} });
      expect(one.job.maxAttempts).toBe(1);
      const own = await store.enqueue({ kind: 'noop', payload: {}, maxAttempts: 5 });
      expect(own.job.maxAttempts).toBe(5);
      const batch = await store.enqueueBatch({
        jobs: [
          { kind: 'noop', payload: { tag: 'a' } },
          { kind: 'noop', payload: { tag: 'b' }, maxAttempts: 2 },
        ],
      });
      const made = await Promise.all(batch.jobIds.map((id) => store.getJob(id)));
      expect(made.map((j) => j?.maxAttempts)).toEqual([1, 2]);
      // One try: a job whose lease is lost is failed, not queued again.
      const [claimed] = await store.claim('noop', 'w1', 1, 60_000);
      expect(claimed).toMatchObject({ id: one.job.id, attempt: 1, maxAttempts: 1 });
      expect(await store.reclaimOwner('w1')).toHaveLength(1);
      expect((await store.getJob(one.job.id))?.status).toBe('failed');
    });

    it('returns the existing job for a repeated idempotency key', async () => {
      const store = await kind.open();
      const first = await store.enqueue(noop(1));
      const second = await store.enqueue(noop(1));
      expect(second.created).toBe(false);
      expect(second.job.id).toBe(first.job.id);
      expect((await store.countByStatus()).queued).toBe(1);
    });

    it('refuses a repeated key with a different request, and changes nothing', async () => {
      const store = await kind.open();
      await store.enqueue(noop(1));
      const error = await rejection(store.enqueue({ ...noop(1), payload: { tag: 'other' } }));
      expect(isProctorError(error, 'IDEMPOTENCY_CONFLICT')).toBe(true);
      expect((await store.countByStatus()).queued).toBe(1);
    });

    it.each([
      [{ kind: 'noop', payload: { sleepMs: -1 } }, 'payload.sleepMs'],
      [{ kind: 'noop', payload: { sleep: 1 } }, 'unknown key `sleep`'],
      [{ kind: 'baseline', payload: {} }, 'payload.bundle'],
      [{ kind: 'baseline', payload: { bundle: 'a\0b' } }, 'payload.bundle: must not contain NUL'],
      [{ kind: 'solve', payload: { bundle: '/x', solver: 'Bad Name' } }, 'payload.solver'],
      [{ kind: 'nope', payload: {} }, 'job.kind'],
      [{ kind: 'noop', payload: {}, priority: 1.5 }, 'job.priority'],
      [{ kind: 'noop', payload: {}, maxAttempts: 0 }, 'job.maxAttempts'],
      [{ kind: 'noop', payload: {}, extra: true }, 'unknown key `extra`'],
      [{ kind: 'noop', payload: { tag: 'x'.repeat(201) } }, 'payload.tag'],
    ])('rejects %j naming the field', async (request, field) => {
      const store = await kind.open();
      const error = await rejection(store.enqueue(request as EnqueueRequest));
      expect(isProctorError(error, 'PAYLOAD_INVALID')).toBe(true);
      expect((error as Error).message).toContain(field);
      expect(await store.countByStatus()).toMatchObject({ queued: 0 });
    });

    it('refuses a parent that does not exist', async () => {
      const store = await kind.open();
      const error = await rejection(store.enqueue({ kind: 'noop', payload: {}, parentId: 99 }));
      expect(isProctorError(error, 'JOB_NOT_FOUND')).toBe(true);
    });
  });

  describe('enqueueBatch', () => {
    it('inserts every job in request order with one batch row', async () => {
      const store = await kind.open();
      const result = await store.enqueueBatch({
        label: 'suite',
        jobs: Array.from({ length: 250 }, (_, i) => noop(i)),
      });
      expect(result).toMatchObject({ created: true, inserted: 250, existing: 0 });
      expect(result.batch).toMatchObject({ label: 'suite', total: 250 });
      for (const [i, id] of result.jobIds.entries()) {
        const job = await store.getJob(id);
        expect(job?.payload).toEqual({ tag: `t${i}`, sleepMs: 0, failAttempts: 0 });
        expect(job?.batchId).toBe(result.batch?.id);
      }
    });

    it('makes no second job when the same batch is enqueued twice with the same keys', async () => {
      const store = await kind.open();
      const jobs = Array.from({ length: 130 }, (_, i) => noop(i));
      const first = await store.enqueueBatch({ idempotencyKey: 'sweep-1', jobs });
      const again = await store.enqueueBatch({ idempotencyKey: 'sweep-1', jobs });
      expect(again.created).toBe(false);
      expect(again.batch?.id).toBe(first.batch?.id);
      expect(again.jobIds).toEqual(first.jobIds);
      // Without a batch key, the job keys alone still prevent duplicates.
      const keysOnly = await store.enqueueBatch({ jobs });
      expect(keysOnly).toMatchObject({ inserted: 0, existing: 130, batch: null });
      expect(keysOnly.jobIds).toEqual(first.jobIds);
      expect((await store.countByStatus()).queued).toBe(130);
    });

    it('mixes new and existing jobs, including a key repeated within one chunk', async () => {
      const store = await kind.open();
      const existing = await store.enqueue(noop(5));
      const result = await store.enqueueBatch({ jobs: [noop(4), noop(5), noop(6), noop(4)] });
      expect(result).toMatchObject({ inserted: 2, existing: 2 });
      expect(result.jobIds[1]).toBe(existing.job.id);
      expect(result.jobIds[3]).toBe(result.jobIds[0]);
      expect(new Set(result.jobIds).size).toBe(3);
    });

    it('writes nothing when any job is invalid, and names it', async () => {
      const store = await kind.open();
      const jobs: unknown[] = Array.from({ length: 300 }, (_, i) => noop(i));
      jobs[217] = { kind: 'noop', payload: { sleepMs: 'soon' } };
      const error = await rejection(store.enqueueBatch({ jobs: jobs as EnqueueRequest[] }));
      expect((error as Error).message).toContain('jobs[217]');
      expect((error as Error).message).toContain('payload.sleepMs');
      expect(await store.countByStatus()).toMatchObject({ queued: 0 });
      expect((await store.listBatches()).items).toHaveLength(0);
    });

    it('rolls back the whole batch on a key conflict', async () => {
      const store = await kind.open();
      await store.enqueue(noop(7));
      const jobs = Array.from({ length: 150 }, (_, i) => noop(i + 100));
      jobs.push({ ...noop(7), payload: { tag: 'different' } });
      const error = await rejection(store.enqueueBatch({ jobs }));
      expect(isProctorError(error, 'IDEMPOTENCY_CONFLICT')).toBe(true);
      expect((await store.countByStatus()).queued).toBe(1);
    });

    it('refuses a batch key replayed with another request', async () => {
      const store = await kind.open();
      await store.enqueueBatch({ idempotencyKey: 'b', jobs: [noop(1)] });
      const error = await rejection(store.enqueueBatch({ idempotencyKey: 'b', jobs: [noop(2)] }));
      expect(isProctorError(error, 'IDEMPOTENCY_CONFLICT')).toBe(true);
      expect((await store.countByStatus()).queued).toBe(1);
    });
  });

  describe('enqueue with input artifacts', () => {
    const input = (id: string, sha: string): ArtifactRecord => ({
      id,
      name: 'candidate.diff',
      mediaType: 'text/x-diff',
      sha256: sha.repeat(64),
      size: 1,
      relPath: `${id}/candidate.diff`,
    });
    const grade = (candidate: string, key?: string): EnqueueRequest => ({
      kind: 'grade',
      payload: { bundle: '/b', candidate },
      ...(key === undefined ? {} : { idempotencyKey: key }),
    });
    // Registered inputs, found by content (every digest these cases use).
    const count = async (store: JobStore) =>
      (
        await store.findInputs(
          'candidate.diff',
          ['a', 'b', 'c', 'd'].map((c) => c.repeat(64)),
        )
      ).length;

    it('registers inputs in the same transaction as the jobs, and none when refused', async () => {
      const store = await kind.open();
      await store.enqueue(grade('a1', 'k'), { inputs: [input('a1', 'a')] });
      expect(await store.findInputs('candidate.diff', ['a'.repeat(64), 'b'.repeat(64)])).toEqual([
        expect.objectContaining({ id: 'a1', jobId: null, attempt: null }),
      ]);
      // The key names another request: neither the job nor the input is written.
      const conflict = await rejection(
        store.enqueue(grade('b1', 'k'), { inputs: [input('b1', 'b')] }),
      );
      expect(isProctorError(conflict, 'IDEMPOTENCY_CONFLICT')).toBe(true);
      const batch = await rejection(
        store.enqueueBatch(
          { jobs: [grade('c1'), { ...noop(1), payload: { sleepMs: -1 } }] },
          { inputs: [input('c1', 'c')] },
        ),
      );
      expect(isProctorError(batch, 'PAYLOAD_INVALID')).toBe(true);
      expect(await count(store)).toBe(1);
      expect((await store.countByStatus()).queued).toBe(1);
    });

    it('refuses to reuse an input that is no longer registered, and writes nothing', async () => {
      const store = await kind.open();
      const error = await rejection(
        store.enqueueBatch(
          { jobs: [grade('gone'), grade('d1')] },
          {
            inputs: [input('d1', 'd')],
            reused: ['gone'],
          },
        ),
      );
      expect(isProctorError(error, 'ARTIFACT_NOT_FOUND')).toBe(true);
      expect(await count(store)).toBe(0);
      expect((await store.countByStatus()).queued).toBe(0);
    });
  });
}
