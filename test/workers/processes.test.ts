// Real worker processes sharing one real database file: crash recovery and claim races.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { spawnTs, type Child } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const CHILD = 'test/helpers/worker-child.ts';

function setup() {
  const dir = tempDir();
  const dbPath = join(dir, 'proctor.db');
  const execLog = join(dir, 'exec.log');
  writeFileSync(execLog, '');
  const store = tempStore({ path: dbPath });
  const executions = () =>
    readFileSync(execLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ').map(Number) as [number, number, number]);
  const effectsPerJob = () =>
    store.database.sqlite
      .prepare(
        "SELECT job_id AS id, count(*) AS n FROM artifacts WHERE name = 'effect' GROUP BY job_id",
      )
      .all() as Array<{ id: number; n: number }>;
  return { dbPath, execLog, store, executions, effectsPerJob };
}

function worker(dbPath: string, execLog: string, args: string[]): Child {
  return spawnTs(CHILD, [dbPath, ...args], { EXEC_LOG: execLog });
}

async function stop(child: Child) {
  await waitFor(() => child.stdout().includes('ready'), { what: 'the worker to start' });
  child.process.kill('SIGTERM');
  const { code } = await child.exited;
  expect(child.stderr()).not.toMatch(/SQLITE_BUSY|database is locked/);
  expect(code).toBe(0);
}

describe('worker processes', () => {
  it.each([
    ['at once, seeing the dead pid on this host', [], 60_000],
    ['when the lease expires', ['--no-dead-owner-check'], 2_000],
  ])(
    'recover 200 in-flight jobs after a SIGKILL %s, and record each side effect once',
    async (_, flags, leaseMs) => {
      const { dbPath, execLog, store, executions, effectsPerJob } = setup();
      const { jobIds } = await store.enqueueBatch({
        jobs: Array.from({ length: 200 }, (_, i) => ({
          kind: 'noop' as const,
          payload: { sleepMs: 3_000 },
          idempotencyKey: `j${i}`,
        })),
      });
      const first = worker(dbPath, execLog, ['200', String(leaseMs), ...flags]);
      await waitFor(async () => (await store.countByStatus()).running === 200, {
        timeoutMs: 30_000,
        what: '200 running jobs',
      });
      await waitFor(() => executions().length === 200, { what: '200 executions started' });
      first.process.kill('SIGKILL');
      await first.exited;

      const second = worker(dbPath, execLog, ['200', String(leaseMs), ...flags]);
      await waitFor(async () => (await store.countByStatus()).done === 200, {
        timeoutMs: 60_000,
        what: '200 done jobs',
      });
      await stop(second);

      const runs = executions();
      expect(runs).toHaveLength(400);
      const secondPid = second.process.pid;
      expect(runs.filter(([, attempt, pid]) => attempt === 2 && pid === secondPid)).toHaveLength(
        200,
      );
      const effects = effectsPerJob();
      expect(effects).toHaveLength(200);
      expect(effects.every((e) => e.n === 1)).toBe(true);
      expect(effects.map((e) => e.id).sort((a, b) => a - b)).toEqual(jobIds);
    },
    120_000,
  );

  it('race 4 processes for 5,000 jobs: none runs twice, none is lost, no SQLITE_BUSY', async () => {
    const { dbPath, execLog, store, executions, effectsPerJob } = setup();
    const workers = Array.from({ length: 4 }, () => worker(dbPath, execLog, ['16']));
    onCleanup(() => Promise.all(workers.map((w) => w.exited)).then(() => undefined));
    // All four running before the jobs arrive: on a loaded machine a worker still starting
    // could find the batch already done, which says nothing about how claims are shared.
    await waitFor(() => workers.every((w) => w.stdout().includes('ready')), {
      timeoutMs: 60_000,
      what: 'the workers to start',
    });
    await store.enqueueBatch({
      jobs: Array.from({ length: 5_000 }, () => ({ kind: 'noop' as const, payload: {} })),
    });
    await waitFor(async () => (await store.countByStatus()).done === 5_000, {
      timeoutMs: 90_000,
      what: '5,000 done jobs',
    });
    await Promise.all(workers.map(stop));

    const runs = executions();
    expect(runs).toHaveLength(5_000);
    expect(new Set(runs.map(([id]) => id)).size).toBe(5_000);
    expect(runs.every(([, attempt]) => attempt === 1)).toBe(true);
    // The claims were contended: several processes took jobs. (Not necessarily all four: on a
    // loaded machine one ready process can be starved of CPU until the others have drained the
    // batch; a CI run saw three of four, with nothing run twice or lost.)
    expect(new Set(runs.map(([, , pid]) => pid)).size).toBeGreaterThanOrEqual(2);
    const effects = effectsPerJob();
    expect(effects).toHaveLength(5_000);
    expect(effects.every((e) => e.n === 1)).toBe(true);
    expect(await store.countByStatus()).toEqual({
      queued: 0,
      running: 0,
      done: 5_000,
      failed: 0,
      cancelled: 0,
    });
  }, 120_000);
});

describe('shutdown signals', () => {
  it('first SIGTERM: aborts a stuck job after the grace period and hands it back, then exits 0', async () => {
    const { dbPath, execLog, store } = setup();
    const { job } = await store.enqueue({ kind: 'noop', payload: { sleepMs: 600_000 } });
    const child = spawnTs(CHILD, [dbPath, '1'], { EXEC_LOG: execLog, GRACE_MS: '500' });
    await waitFor(async () => (await store.getJob(job.id))?.status === 'running', {
      timeoutMs: 20_000,
    });
    await waitFor(() => child.stdout().includes('ready'), { what: 'the worker to start' });
    child.process.kill('SIGTERM');
    expect((await child.exited).code).toBe(0);
    expect(child.stdout()).toContain('drained');
    expect(await store.getJob(job.id)).toMatchObject({
      status: 'queued',
      attempt: 1,
      maxAttempts: 4,
      leaseOwner: null,
    });
  });

  it('second SIGTERM: exits 130 at once, leaving the job to the next worker', async () => {
    const { dbPath, execLog, store } = setup();
    const { job } = await store.enqueue({ kind: 'noop', payload: { sleepMs: 600_000 } });
    const child = spawnTs(CHILD, [dbPath, '1'], { EXEC_LOG: execLog, GRACE_MS: '600000' });
    await waitFor(async () => (await store.getJob(job.id))?.status === 'running', {
      timeoutMs: 20_000,
    });
    await waitFor(() => child.stdout().includes('ready'), { what: 'the worker to start' });
    child.process.kill('SIGTERM');
    await waitFor(() => child.stderr().includes('SIGTERM: no new jobs'), {
      what: 'the first signal to be seen',
    });
    child.process.kill('SIGTERM');
    expect((await child.exited).code).toBe(130);
    expect((await store.getJob(job.id))?.status).toBe('running');
    await store.cancel([job.id]); // asked while its worker is gone: the next one ends it
    const next = spawnTs(CHILD, [dbPath, '1'], { EXEC_LOG: execLog });
    await waitFor(async () => (await store.getJob(job.id))?.status === 'cancelled', {
      timeoutMs: 20_000,
    });
    // The dead-owner reclaim runs inside start(), before the signal handlers exist.
    await stop(next);
  });
});
