import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { ProctorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { createRedactor } from '../../src/store/index.js';
import type { ClaimScope } from '../../src/queue/index.js';
import {
  createWorkerPool,
  noopHandler,
  type JobHandler,
  type WorkerPoolOptions,
} from '../../src/workers/index.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

function pool(options: Partial<WorkerPoolOptions> & Pick<WorkerPoolOptions, 'store'>) {
  const created = createWorkerPool({
    clock: systemClock,
    logger: silentLogger,
    handlers: { noop: noopHandler },
    concurrency: { noop: 4 },
    pollMs: 50,
    cancelPollMs: 100,
    ...options,
  });
  onCleanup(() => created.stop({ graceMs: 0 }));
  return created;
}

/** Resolves when the signal aborts; the handler then throws, as a real one tearing down would. */
const untilAborted: JobHandler = ({ signal }) =>
  new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(new Error(`aborted: ${String(signal.reason)}`)), {
      once: true,
    }),
  );

describe('worker pool', () => {
  it('runs every job, never more at once than its slots', async () => {
    const store = tempStore();
    let active = 0;
    let peak = 0;
    const handler: JobHandler = async () => {
      active += 1;
      peak = Math.max(peak, active);
      await sleep(5);
      active -= 1;
      return { result: 'ok' };
    };
    await store.enqueueBatch({
      jobs: Array.from({ length: 60 }, () => ({ kind: 'noop' as const, payload: {} })),
    });
    await pool({ store, handlers: { noop: handler }, concurrency: { noop: 3 } }).start();
    await waitFor(async () => (await store.countByStatus()).done === 60, { what: '60 done jobs' });
    expect(peak).toBe(3);
  });

  it('stores the outcome class of each grade with its completion or its failure', async () => {
    const store = tempStore();
    const reasons: Record<string, unknown> = {
      pass: { verdict: 'PASS', reason: 'PASS' },
      hidden: { verdict: 'FAIL', reason: 'HIDDEN_FAILED' },
      infra: { verdict: 'FAIL', reason: 'INFRA_ERROR' },
    };
    const handler: JobHandler = async ({ payload }) => {
      const name = (payload as { candidate: string }).candidate;
      if (name === 'broken') throw new ProctorError('BUNDLE_INVALID', 'task.toml: gone');
      if (name === 'docker') throw new ProctorError('IMAGE_INVALID', 'the build failed');
      return { result: reasons[name] };
    };
    const names = ['pass', 'hidden', 'infra', 'broken', 'docker'];
    const { jobIds } = await store.enqueueBatch({
      jobs: names.map((candidate) => ({
        kind: 'grade' as const,
        payload: { bundle: '/b', candidate },
      })),
    });
    await pool({ store, handlers: { grade: handler }, concurrency: { grade: 2 } }).start();
    await waitFor(async () => {
      const c = await store.countByStatus();
      return c.done + c.failed === names.length;
    });
    const outcomes = await Promise.all(jobIds.map(async (id) => (await store.getJob(id))?.outcome));
    expect(outcomes).toEqual(['resolved', 'unresolved', 'error', 'invalid_task', 'error']);
  });

  it('claims, before each claim, only the jobs its claimScope allows at that moment', async () => {
    const store = tempStore();
    const jobs = Array.from({ length: 3 }, () => ({ kind: 'noop' as const, payload: {} }));
    const own = (await store.enqueueBatch({ jobs })).batch?.id as string;
    const other = (await store.enqueueBatch({ jobs })).batch?.id as string;
    let scope: ClaimScope | undefined = { batchId: own };
    let reads = 0;
    const claimScope = () => {
      reads += 1;
      return scope;
    };
    await pool({ store, claimScope }).start();
    await waitFor(async () => (await store.batchProgress(own)).counts.done === 3, {
      what: "the own batch's jobs done",
    });
    // Several more claims with the scope, none of which may take the other batch's jobs.
    const readsThen = reads;
    await waitFor(() => reads >= readsThen + 5, { what: 'five more claims' });
    expect((await store.batchProgress(other)).counts).toMatchObject({ queued: 3, running: 0 });
    scope = undefined;
    await waitFor(async () => (await store.batchProgress(other)).counts.done === 3, {
      what: "the other batch's jobs done once the scope is lifted",
    });
  });

  it('claims only kinds it has handlers for', async () => {
    const store = tempStore();
    await store.enqueue({ kind: 'baseline', payload: { bundle: '/x' } });
    await store.enqueue({ kind: 'noop', payload: {} });
    await pool({ store }).start();
    await waitFor(async () => (await store.countByStatus()).done === 1);
    expect((await store.listJobs({ kind: 'baseline' })).items[0]?.status).toBe('queued');
  });

  it('retries a failing job after backoff and then succeeds', async () => {
    const store = tempStore({ backoff: { baseMs: 20 } });
    const { job } = await store.enqueue({ kind: 'noop', payload: { failAttempts: 2 } });
    await pool({ store }).start();
    const done = await waitFor(async () => {
      const j = await store.getJob(job.id);
      return j?.status === 'done' && j;
    });
    expect(done).toMatchObject({ attempt: 3, result: { ok: true, attempt: 3 } });
  });

  it('fails a job at once on a non-retryable error or a payload that no longer parses', async () => {
    const store = tempStore();
    const { job: bad } = await store.enqueue({ kind: 'noop', payload: {} });
    const { job: broken } = await store.enqueue({ kind: 'noop', payload: {} });
    store.database.sqlite
      .prepare(`UPDATE jobs SET payload = '{"sleepMs":"x"}' WHERE id = ?`)
      .run(broken.id);
    const handler: JobHandler = async ({ job }) => {
      if (job.id === bad.id) throw new ProctorError('BUNDLE_INVALID', 'bundle is invalid');
      return {};
    };
    await pool({ store, handlers: { noop: handler } }).start();
    await waitFor(async () => (await store.countByStatus()).failed === 2);
    expect(await store.getJob(bad.id)).toMatchObject({
      attempt: 1,
      lastError: 'bundle is invalid',
      errorCode: 'BUNDLE_INVALID',
    });
    expect(await store.getJob(broken.id)).toMatchObject({
      lastError: expect.stringContaining('payload.sleepMs'),
      errorCode: 'PAYLOAD_INVALID',
    });
  });

  it('delivers a cancel from another connection to the running job within 2 s', async () => {
    const path = join(tempDir(), 'proctor.db');
    const store = tempStore({ path });
    const other = tempStore({ path });
    let abortedAt = 0;
    const handler: JobHandler = (context) => {
      context.signal.addEventListener('abort', () => (abortedAt = Date.now()));
      return untilAborted(context);
    };
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    // The default cancel poll (1 s), as a user would run it.
    const p = createWorkerPool({
      store,
      clock: systemClock,
      logger: silentLogger,
      handlers: { noop: handler },
      concurrency: { noop: 1 },
      pollMs: 50,
    });
    onCleanup(() => p.stop({ graceMs: 0 }));
    await p.start();
    await waitFor(async () => (await store.getJob(job.id))?.status === 'running');
    const requestedAt = Date.now();
    await other.cancel([job.id]);
    await waitFor(async () => (await other.getJob(job.id))?.status === 'cancelled', {
      timeoutMs: 5_000,
    });
    expect(abortedAt - requestedAt).toBeLessThan(2_000);
    expect((await other.getJob(job.id))?.lastError).toBe('cancelled while running');
  });

  it('never starts a job cancelled while queued', async () => {
    const store = tempStore();
    const started: number[] = [];
    const { jobIds } = await store.enqueueBatch({
      jobs: Array.from({ length: 10 }, () => ({ kind: 'noop' as const, payload: {} })),
    });
    await store.cancel(jobIds.slice(0, 5));
    const handler: JobHandler = async ({ job }) => {
      started.push(job.id);
      return {};
    };
    await pool({ store, handlers: { noop: handler } }).start();
    await waitFor(async () => (await store.countByStatus()).done === 5);
    expect(started.sort((a, b) => a - b)).toEqual(jobIds.slice(5));
  });

  it('lets running jobs finish on stop, then aborts and hands back the rest after the grace period', async () => {
    const store = tempStore();
    const seen: string[] = [];
    const handler: JobHandler = async (context) => {
      const { sleepMs } = context.payload as { sleepMs: number };
      if (sleepMs > 0) {
        await sleep(sleepMs);
        return { result: 'finished' };
      }
      try {
        return await untilAborted(context);
      } finally {
        seen.push(String(context.signal.reason));
      }
    };
    const quick = await store.enqueue({ kind: 'noop', payload: { sleepMs: 100, tag: 'quick' } });
    const stuck = await store.enqueue({ kind: 'noop', payload: { tag: 'stuck' }, maxAttempts: 1 });
    const p = pool({ store, handlers: { noop: handler } });
    await p.start();
    await waitFor(async () => (await store.countByStatus()).running === 2);
    await p.stop({ graceMs: 400 });
    expect(p.runningCount()).toBe(0);
    expect(seen).toEqual(['shutdown']);
    expect(await store.getJob(quick.job.id)).toMatchObject({ status: 'done', result: 'finished' });
    // Handed back without spending its only attempt.
    expect(await store.getJob(stuck.job.id)).toMatchObject({
      status: 'queued',
      attempt: 1,
      maxAttempts: 2,
    });
  });

  it('keeps a slot busy until the handler has really stopped', async () => {
    const store = tempStore();
    let stoppedAt = 0;
    const handler: JobHandler = async ({ signal }) => {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await sleep(300); // tearing down containers takes a while
      stoppedAt = Date.now();
      throw new Error('stopped');
    };
    await store.enqueue({ kind: 'noop', payload: {} });
    const p = pool({ store, handlers: { noop: handler }, concurrency: { noop: 1 } });
    await p.start();
    await waitFor(async () => (await store.countByStatus()).running === 1);
    await p.stop({ graceMs: 0 });
    expect(stoppedAt).toBeGreaterThan(0);
    expect(Date.now()).toBeGreaterThanOrEqual(stoppedAt);
  });

  it('aborts a job whose lease was taken over, and drops its result', async () => {
    const store = tempStore();
    let reason: unknown;
    const handler: JobHandler = async (context) => {
      try {
        return await untilAborted(context);
      } finally {
        reason = context.signal.reason;
      }
    };
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    await pool({ store, handlers: { noop: handler }, heartbeatMs: 50 }).start();
    await waitFor(async () => (await store.getJob(job.id))?.status === 'running');
    // Another worker reclaimed it (as after a partition): its attempt moves on.
    store.database.sqlite
      .prepare("UPDATE jobs SET attempt = attempt + 1, lease_owner = 'other' WHERE id = ?")
      .run(job.id);
    await waitFor(() => reason === 'lease_lost', { what: 'lease_lost abort' });
    expect(await store.getJob(job.id)).toMatchObject({
      status: 'running',
      leaseOwner: 'other',
      attempt: 2,
    });
  });

  it('redacts results and errors before storing them', async () => {
    const store = tempStore();
    const redactor = createRedactor({ secrets: ['sk-poolsecret-0123456789'] });
    const handler: JobHandler = async ({ job }) => {
      if (job.id === 1) return { result: { note: 'key sk-poolsecret-0123456789', api_key: 'x1' } };
      throw new ProctorError(
        'BUNDLE_INVALID',
        'failed with Authorization: Bearer abcdefghijklmnop',
      );
    };
    await store.enqueueBatch({
      jobs: [
        { kind: 'noop', payload: {} },
        { kind: 'noop', payload: {} },
      ],
    });
    await pool({ store, handlers: { noop: handler }, redact: redactor }).start();
    await waitFor(async () => {
      const c = await store.countByStatus();
      return c.done === 1 && c.failed === 1;
    });
    expect((await store.getJob(1))?.result).toEqual({
      note: 'key [REDACTED]',
      api_key: '[REDACTED]',
    });
    expect((await store.getJob(2))?.lastError).toContain('Bearer [REDACTED]');
  });

  it('discards the artifacts of a completion that lost its lease, and only those', async () => {
    const store = tempStore();
    const discarded: string[] = [];
    const artifact = (id: string) => ({
      id,
      name: 'log',
      mediaType: 'text/plain',
      sha256: 'a'.repeat(64),
      size: 1,
      relPath: `${id}/log`,
    });
    const handler: JobHandler = async ({ job }) => {
      if (job.id === 1) {
        // Another worker takes the job over while this attempt finishes.
        store.database.sqlite
          .prepare("UPDATE jobs SET attempt = attempt + 1, lease_owner = 'other' WHERE id = 1")
          .run();
      }
      return { result: 'ok', artifacts: [artifact(`art-${job.id}`)] };
    };
    await store.enqueueBatch({
      jobs: [
        { kind: 'noop', payload: {} },
        { kind: 'noop', payload: {} },
      ],
    });
    await pool({
      store,
      handlers: { noop: handler },
      discardArtifacts: async (records) => {
        discarded.push(...records.map((r) => r.id));
      },
    }).start();
    await waitFor(async () => (await store.getJob(2))?.status === 'done');
    await waitFor(() => discarded.length === 1, { what: 'the lost attempt to discard' });
    expect(discarded).toEqual(['art-1']);
    expect(await store.getArtifact('art-2')).toBeDefined();
    expect(await store.getArtifact('art-1')).toBeUndefined();
  });

  it('reclaims, at start, the jobs of a dead owner on this host', async () => {
    const store = tempStore();
    await store.enqueueBatch({
      jobs: Array.from({ length: 3 }, () => ({ kind: 'noop' as const, payload: {} })),
    });
    await store.claim('noop', 'ghost', 3, 60_000);
    await pool({ store, isOwnerDead: (owner) => owner === 'ghost' }).start();
    await waitFor(async () => (await store.countByStatus()).done === 3);
    const jobs = (await store.listJobs()).items;
    expect(jobs.every((j) => j.attempt === 2)).toBe(true);
  });

  it('backs an idle kind off up to idleMaxMs, and a notify still wakes it at once', async () => {
    const store = tempStore();
    const claim = store.claim.bind(store);
    let claims = 0;
    store.claim = (...args) => {
      claims += 1;
      return claim(...args);
    };
    const created = pool({ store, pollMs: 20, idleMaxMs: 60_000 });
    await created.start();
    await sleep(1_000);
    // 20, 40, 80, 160, 320, 640 ms: seven claims at most in a second, where a 20 ms poll
    // without back-off makes about fifty.
    expect(claims).toBeGreaterThanOrEqual(3);
    expect(claims).toBeLessThanOrEqual(7);
    // Its wait is now past a second long: only the notify can run this job soon.
    await sleep(400);
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    created.notify();
    await waitFor(async () => (await store.getJob(job.id))?.status === 'done', {
      timeoutMs: 600,
      what: 'the notified job done',
    });
  });

  it('polls at pollMs, not its back-off, for a retry of its own coming due', async () => {
    const store = tempStore({ backoff: { baseMs: 3_000 } });
    const { job } = await store.enqueue({ kind: 'noop', payload: { failAttempts: 1 } });
    await pool({ store, pollMs: 20, idleMaxMs: 60_000 }).start();
    const failed = await waitFor(async () => {
      const j = await store.getJob(job.id);
      return j?.attempt === 1 && j.status === 'queued' && Date.now();
    });
    // Backing off from 20 ms, its claims would fall at 2.54 s and 5.10 s after the failure.
    await waitFor(async () => (await store.getJob(job.id))?.status === 'done', {
      timeoutMs: 4_500,
      what: 'the retry done',
    });
    expect(Date.now() - failed).toBeGreaterThanOrEqual(2_500);
  });

  it("wakes the kind of a finished job's children at once, not at its next poll", async () => {
    const store = tempStore();
    await store.enqueue({ kind: 'solve', payload: { bundle: '/b', solver: 'scripted' } });
    const ran: string[] = [];
    const created = pool({
      store,
      pollMs: 60_000,
      handlers: {
        solve: () => {
          ran.push('solve');
          return Promise.resolve({
            result: 'solved',
            children: [{ kind: 'grade' as const, payload: { bundle: '/b', candidate: 'c1' } }],
          });
        },
        grade: () => {
          ran.push('grade');
          return Promise.resolve({ result: 'graded' });
        },
      },
      concurrency: { solve: 1, grade: 1 },
    });
    await created.start();
    // Both kinds claimed at start (the grade's claim found nothing) and then wait a minute.
    await waitFor(async () => (await store.countByStatus()).done === 2, {
      timeoutMs: 3_000,
      what: 'the solve and its child grade done',
    });
    expect(ran).toEqual(['solve', 'grade']);
  });

  it('rejects a concurrency that is not a positive integer', () => {
    const store = tempStore();
    expect(() =>
      createWorkerPool({
        store,
        clock: systemClock,
        logger: silentLogger,
        handlers: { noop: noopHandler },
        concurrency: { noop: 0 },
      }),
    ).toThrow('Expected concurrency of `noop` to be an integer >= 1, got `0`');
  });
});

describe('retention', () => {
  it('prunes finished jobs older than the retention period, and keeps the rest', async () => {
    const store = tempStore();
    const { jobIds } = await store.enqueueBatch({
      jobs: Array.from({ length: 3 }, () => ({ kind: 'noop' as const, payload: {} })),
    });
    await store.claim('noop', 'w', 2, 60_000);
    await store.complete({ id: jobIds[0]!, attempt: 1 }, null);
    store.database.sqlite
      .prepare('UPDATE jobs SET finished_at = finished_at - 3600000 WHERE id = ?')
      .run(jobIds[0]!);
    await store.complete({ id: jobIds[1]!, attempt: 1 }, null);
    await pool({
      store,
      handlers: { noop: noopHandler },
      retentionMs: 60_000,
      pruneEveryMs: 50,
    }).start();
    await waitFor(async () => (await store.getJob(jobIds[0]!)) === undefined, {
      what: 'the old job to be pruned',
    });
    await waitFor(async () => (await store.getJob(jobIds[2]!))?.status === 'done');
    expect((await store.getJob(jobIds[1]!))?.status).toBe('done');
  });
});
