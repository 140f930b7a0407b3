// Crash tests on PostgreSQL, with real worker processes (test/helpers/worker-child.ts: the
// production pool and the PostgreSQL store, a noop handler whose side effect is an artifact
// row registered with the fenced completion) and each test in its own database: processes
// racing for the same jobs, workers SIGKILLed mid-sweep, connections cut mid-transaction, and
// the server restarted or stopped under load (a cluster of the test's own, never the shared
// one). Every execution start is logged ("job attempt pid"), so a re-run after a crash
// (allowed) is told apart from a second completion (never allowed): each job must end done
// with exactly one side effect.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPgJobStore, type PgJobStore } from '../../src/queue/pg/store.js';
import { startTestCluster } from '../helpers/pg-cluster.js';
import { emptyPgDatabase, withDatabase } from '../helpers/postgres.js';
import { spawnTs, type Child } from '../helpers/processes.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const CHILD = 'test/helpers/worker-child.ts';

/** The test's own view of the database, on connections the tests never cut. */
function observe(url: string): PgJobStore {
  const store = openPgJobStore(`${url}&application_name=proctor-observer`, { maxConnections: 2 });
  onCleanup(() => store.close());
  return store;
}

async function setup(url?: string) {
  const db = url ?? (await emptyPgDatabase());
  const store = observe(db);
  await store.migrate();
  const execLog = join(tempDir(), 'exec.log');
  writeFileSync(execLog, '');
  const executions = () =>
    readFileSync(execLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ').map(Number) as [number, number, number]);
  const effectsPerJob = async () => {
    const { rows } = await (
      await store.pool()
    ).query<{ id: number; n: number }>(
      `SELECT job_id AS id, count(*)::int AS n FROM artifacts WHERE name = 'effect'
       GROUP BY job_id ORDER BY job_id`,
    );
    return rows;
  };
  const worker = (args: string[]): Child =>
    spawnTs(CHILD, [db, ...args], { EXEC_LOG: execLog, GRACE_MS: '2000' });
  const done = async () => (await store.countByStatus()).done;
  return { url: db, store, executions, effectsPerJob, worker, done };
}

async function enqueue(store: PgJobStore, n: number, sleepMs = 0) {
  const { jobIds, batch } = await store.enqueueBatch({
    jobs: Array.from({ length: n }, (_, i) => ({
      kind: 'noop' as const,
      payload: { sleepMs },
      idempotencyKey: `j${i}`,
    })),
  });
  return { jobIds, batchId: batch!.id };
}

/** waitFor, failing with the workers' last words (what a user would see) when it times out. */
async function waitWith<T>(
  workers: Child[],
  probe: Parameters<typeof waitFor<T>>[0],
  options: Parameters<typeof waitFor<T>>[1],
): Promise<T> {
  try {
    return await waitFor(probe, options);
  } catch (error) {
    const tails = workers.map((w) => w.stderr().split('\n').slice(-15).join('\n'));
    throw new Error(`${(error as Error).message}; the workers said:\n${tails.join('\n--\n')}`);
  }
}

/** Each worker is still running; one that is not fails with its last lines on stderr. */
async function expectAlive(workers: Child[]): Promise<void> {
  for (const w of workers) {
    if (w.process.exitCode === null && w.process.signalCode === null) continue;
    // 'exit' comes before the last output is read: wait for the streams to close.
    await new Promise((resolve) => {
      if (w.process.stderr?.closed) resolve(null);
      else w.process.once('close', resolve);
    });
    const tail = w.stderr().split('\n').slice(-30).join('\n');
    expect.fail(
      `a worker exited (${String(w.process.exitCode ?? w.process.signalCode)}):\n${tail}`,
    );
  }
}

/** Everything a worker said is a one-line log message: no stack trace, no crash. */
function expectOneLiners(child: Child) {
  const lines = child.stderr().split('\n').filter(Boolean);
  expect(lines.filter((line) => !line.startsWith('proctor '))).toEqual([]);
}

async function stop(child: Child) {
  await waitFor(() => child.stdout().includes('ready'), { what: 'the worker to start' });
  child.process.kill('SIGTERM');
  const { code } = await child.exited;
  expect(code).toBe(0);
}

/** Every job done, with exactly one side effect each, and the batch's kept counts exact. */
async function expectEachOnce(
  s: Awaited<ReturnType<typeof setup>>,
  jobIds: number[],
  batchId: string,
) {
  const effects = await s.effectsPerJob();
  expect(effects.map((e) => e.id)).toEqual(jobIds);
  expect(effects.filter((e) => e.n !== 1)).toEqual([]);
  const counts = await s.store.countByStatus();
  expect(counts).toEqual({
    queued: 0,
    running: 0,
    done: jobIds.length,
    failed: 0,
    cancelled: 0,
  });
  expect((await s.store.batchProgress(batchId)).counts).toEqual(counts);
  // An execution is started at most once per attempt.
  const runs = s.executions().map(([id, attempt]) => `${id}:${attempt}`);
  expect(new Set(runs).size).toBe(runs.length);
}

describe('worker processes on PostgreSQL', () => {
  it('race 4 processes for 3,000 jobs: each runs once, none is lost, all take part', async () => {
    const s = await setup();
    const { jobIds, batchId } = await enqueue(s.store, 3_000);
    const workers = Array.from({ length: 4 }, () => s.worker(['16']));
    await waitFor(async () => (await s.done()) === 3_000, {
      timeoutMs: 90_000,
      what: '3,000 done jobs',
    });
    await Promise.all(workers.map(stop));
    await expectEachOnce(s, jobIds, batchId);
    const runs = s.executions();
    expect(runs).toHaveLength(3_000);
    expect(runs.every(([, attempt]) => attempt === 1)).toBe(true);
    expect(new Set(runs.map(([, , pid]) => pid)).size).toBe(4);
  }, 120_000);

  it('finish a sweep exactly once when 2 of 3 workers are SIGKILLed mid-sweep and restarted', async () => {
    const s = await setup();
    const { jobIds, batchId } = await enqueue(s.store, 600, 200);
    const workers = Array.from({ length: 3 }, () => s.worker(['20']));
    await waitFor(async () => (await s.done()) >= 100, {
      timeoutMs: 60_000,
      what: '100 done jobs',
    });
    for (const w of workers.slice(0, 2)) {
      w.process.kill('SIGKILL');
      await w.exited;
    }
    const killed = new Set(workers.slice(0, 2).map((w) => w.process.pid));
    const cut = s.executions().filter(([, , pid]) => killed.has(pid)).length;
    expect((await s.store.countByStatus()).running).toBeGreaterThan(0);
    // Restarted on this host: they see the dead owners' pids and reclaim their jobs at once.
    const restarted = [s.worker(['20']), s.worker(['20'])];
    await waitFor(async () => (await s.done()) === 600, {
      timeoutMs: 90_000,
      what: '600 done jobs',
    });
    await Promise.all([workers[2]!, ...restarted].map(stop));
    await expectEachOnce(s, jobIds, batchId);
    expect(cut).toBeGreaterThan(0);
    // Some jobs were run again, and only those whose earlier runs died with their worker.
    const byJob = new Map<number, Array<[number, number]>>();
    for (const [id, attempt, pid] of s.executions())
      byJob.set(id, [...(byJob.get(id) ?? []), [attempt, pid]]);
    expect(byJob.size).toBe(600);
    const rerun = [...byJob.values()].filter((runs) => runs.length > 1);
    expect(rerun.length).toBeGreaterThan(0);
    for (const runs of rerun) {
      const earlier = runs.sort((x, y) => x[0] - y[0]).slice(0, -1);
      expect(earlier.every(([, pid]) => killed.has(pid))).toBe(true);
    }
  }, 150_000);

  it("cut a worker's connections mid-claim and mid-finish: it carries on and its lost jobs are reclaimed", async () => {
    const s = await setup();
    // 800 jobs for six cuts 40 jobs apart: on a loaded machine a look at the count can come
    // after a hundred more jobs, and with 400 the sweep once ended after five cuts.
    const { jobIds, batchId } = await enqueue(s.store, 800, 20);
    const workers = [s.worker(['8', '2000']), s.worker(['8', '2000'])];
    // Both workers running (connected, the schema checked) before the first cut: a worker
    // whose start-up migration is cut fails at once, as one that cannot reach its database
    // does, which is not what this test is about; on a loaded machine one could still be
    // starting when the other has finished 40 jobs.
    await waitFor(() => workers.every((w) => w.stdout().includes('ready')), {
      timeoutMs: 60_000,
      what: 'the workers to start',
    });
    const admin = new pg.Client({ connectionString: s.url });
    await admin.connect();
    onCleanup(() => admin.end());
    let cuts = 0;
    let terminated = 0;
    let last = 0;
    await waitWith(
      workers,
      async () => {
        const finished = await s.done();
        if (cuts < 6 && finished >= last + 40) {
          last = finished;
          cuts += 1;
          // Every backend of the workers (their pools), whatever it is doing at that moment.
          const { rows } = await admin.query<{ ok: boolean }>(
            `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'proctor'`,
          );
          terminated += rows.filter((r) => r.ok).length;
        }
        return finished === 800;
      },
      { timeoutMs: 90_000, what: '800 done jobs' },
    );
    expect(cuts).toBe(6);
    expect(terminated).toBeGreaterThan(6);
    // Neither worker died of it.
    await expectAlive(workers);
    await Promise.all(workers.map(stop));
    for (const w of workers) expectOneLiners(w);
    await expectEachOnce(s, jobIds, batchId);
  }, 120_000);
});

describe('worker processes when the PostgreSQL server goes away', () => {
  it('lose nothing and run nothing twice when the server restarts under load', async () => {
    const cluster = startTestCluster();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE proctor');
    await admin.end();
    const s = await setup(withDatabase(cluster.url, 'proctor'));
    const { jobIds, batchId } = await enqueue(s.store, 1_000, 20);
    const workers = Array.from({ length: 3 }, () => s.worker(['10', '3000']));
    // Every worker running (its first connection made and the schema checked) before the
    // restart: on a loaded machine one could still be starting, and a worker that cannot
    // reach its database at start fails at once, which is not what this test is about.
    await waitFor(() => workers.every((w) => w.stdout().includes('ready')), {
      timeoutMs: 60_000,
      what: 'the workers to start',
    });
    await waitFor(async () => (await s.done()) >= 200, {
      timeoutMs: 60_000,
      what: '200 done jobs',
    });
    cluster.restart();
    // The test's own connections break too: a probe that meets the restart just looks again.
    await waitWith(workers, async () => (await s.done().catch(() => 0)) === 1_000, {
      timeoutMs: 90_000,
      intervalMs: 200,
      what: '1,000 done jobs after the restart',
    });
    await expectAlive(workers);
    await Promise.all(workers.map(stop));
    for (const w of workers) expectOneLiners(w);
    await expectEachOnce(s, jobIds, batchId);
  }, 150_000);

  it('say so in one line per retry while the server is down, back off, and resume when it returns', async () => {
    const cluster = startTestCluster();
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query('CREATE DATABASE proctor');
    await admin.end();
    const s = await setup(withDatabase(cluster.url, 'proctor'));
    const { jobIds, batchId } = await enqueue(s.store, 300, 20);
    const worker = s.worker(['4', '5000']);
    await waitFor(async () => (await s.done()) >= 30, { timeoutMs: 60_000, what: '30 done jobs' });
    await s.store.close(); // the test's own pool would only see the same outage
    cluster.stop();
    const retries = () =>
      worker
        .stderr()
        .split('\n')
        .filter((line) => /database .* unreachable/.test(line));
    // The first failure, then three failed probes 0.25, 0.5 and 1 s apart (backoff).
    await waitWith([worker], () => retries().length >= 4, {
      timeoutMs: 30_000,
      what: 'the worker to report four failed connection attempts',
    });
    cluster.start();
    await waitWith([worker], () => worker.stderr().includes('is reachable again after'), {
      timeoutMs: 30_000,
      what: 'the worker to see the database again',
    });
    const lines = retries();
    expect(lines[0]).toMatch(
      /^proctor warn: database postgres:\/\/\*\*\*@localhost:\d+\/proctor\?host=\S+ is unreachable \(.+\); retrying in 250 ms$/,
    );
    expect(lines[1]).toMatch(/still unreachable after [\d.]+ m?s \(.+\); retrying in 500 ms$/);
    expect(lines[2]).toMatch(/retrying in 1\.0 s$/);
    expect(lines[3]).toMatch(/retrying in 2\.0 s$/);
    const s2 = await setup(withDatabase(cluster.url, 'proctor'));
    await waitWith([worker], async () => (await s2.done()) === 300, {
      timeoutMs: 60_000,
      what: '300 done jobs after the outage',
    });
    await expectAlive([worker]);
    await stop(worker);
    expectOneLiners(worker);
    await expectEachOnce({ ...s2, executions: s.executions }, jobIds, batchId);
  }, 150_000);
});
