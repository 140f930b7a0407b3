// `--wait` against worker presence, end to end: the real binary, a real `proctor worker`
// killed by a real SIGKILL, stale presence files naming live pids, a worker of another host on
// a shared PostgreSQL queue, and the real Docker engine.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { machineHost } from '../../src/config.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openSqliteJobStore, type JobStore } from '../../src/queue/index.js';
import { reapOrphans } from '../../src/sandbox/cleanup.js';
import { pruneTemplates } from '../../src/sandbox/template-prune.js';
import { testDocker } from '../helpers/docker.js';
import { proctor } from '../helpers/cli.js';
import { emptyPgDatabase, tempPgStore } from '../helpers/postgres.js';
import { leftovers } from '../helpers/home.js';
import { ROOT, spawnTs, type Child } from '../helpers/processes.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const BIN = join(ROOT, 'bin/proctor.js');
const PRESENCE_CHILD = 'test/helpers/presence-child.ts';

/** A suite of `n` copies of the shell task whose runner first sleeps, so jobs stay in flight. */
function slowSuite(n: number, sleepSeconds: number, prefix = 'slow'): string {
  const root = tempDir();
  for (let i = 0; i < n; i++) {
    const dir = join(root, `t${i}`);
    cpSync(TASK, dir, { recursive: true });
    const run = join(dir, 'tests/run');
    writeFileSync(run, readFileSync(run, 'utf8').replace(/^(#!.*\n)/, `$1sleep ${sleepSeconds}\n`));
    const toml = join(dir, 'task.toml');
    // The runner's limit leaves room for the sleep: its run must end in its own time.
    const text = readFileSync(toml, 'utf8')
      .replace('shell-div-zero', `${prefix}-${i}`)
      .replace(/^test_seconds = \d+$/m, `test_seconds = ${sleepSeconds + 30}`);
    writeFileSync(toml, text);
  }
  return root;
}

/** A live process that is no worker: the pid a stale presence file may name after reuse. */
function unrelatedProcess(): number {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  onCleanup(() => {
    child.kill('SIGKILL');
  });
  if (child.pid === undefined) throw new Error('could not start sleep');
  return child.pid;
}

/** A fresh home (of `host`) whose Docker resources are removed after the test, whatever happened. */
function dockerHome(host = machineHost()): string {
  const home = tempDir();
  // Registered before any process starts, so it runs after they are killed.
  onCleanup(async () => {
    await reapOrphans(testDocker(), { home, host, unlabelled: true }, () => false);
    await pruneTemplates(testDocker(), { home, host, unlabelled: true });
  });
  return home;
}

/**
 * Waits for the `count` jobs of `batchId` to be done, and checks that each ran once
 * (attempt 1) and by `worker`, which logs each job's end.
 */
async function ranOnceBy(
  worker: Child,
  store: Pick<JobStore, 'batchProgress' | 'listJobs'>,
  batchId: string,
  count: number,
  timeoutMs: number,
): Promise<void> {
  await waitFor(async () => (await store.batchProgress(batchId)).counts.done === count, {
    what: `the worker to finish batch ${batchId}`,
    timeoutMs,
    intervalMs: 500,
  });
  const { items } = await store.listJobs({ batchId }, { limit: count + 10 });
  expect(items.map((job) => [job.status, job.attempt])).toEqual(Array(count).fill(['done', 1]));
  for (const job of items) {
    expect(worker.stderr()).toContain(`job done (job=${job.id} kind=baseline attempt=1)`);
  }
}

const ended = (child: Child, timeoutMs: number, what: string) =>
  waitFor(() => child.process.exitCode !== null || child.process.signalCode !== null, {
    timeoutMs,
    intervalMs: 200,
    what,
  });

describe('--wait and worker presence', () => {
  it('takes over when the worker it relies on is SIGKILLed mid-job: every verdict, no container left', async () => {
    const home = dockerHome();
    writeFileSync(join(home, 'proctor.toml'), '[workers]\nbaseline = 2\ngrade = 1\nsolve = 1\n');
    const worker = spawnTs(BIN, ['--home', home, 'worker']);
    await waitFor(() => worker.stderr().includes('ready'), {
      what: 'the worker to start',
      timeoutMs: 60_000,
    });
    const root = slowSuite(3, 2);
    const waiting = spawnTs(BIN, ['--home', home, 'baseline', root, '--gold', '--wait']);
    // Mid-job: the worker (not the waiting command) runs a baseline with its containers up.
    await waitFor(async () => (await leftovers(home)).length >= 2, {
      what: 'the worker to have containers up',
      timeoutMs: 90_000,
      intervalMs: 200,
    });
    expect(waiting.stderr()).not.toMatch(/running the jobs here/);
    worker.process.kill('SIGKILL');
    await worker.exited;

    await ended(waiting, 120_000, 'the waiting baseline to end after its worker died');
    expect(waiting.stderr()).toMatch(/no live worker serves this home any more/);
    expect(waiting.process.exitCode).toBe(0);
    for (let i = 0; i < 3; i++) expect(waiting.stdout()).toMatch(new RegExp(`slow-${i}\\s+valid`));
    expect(waiting.stdout()).toMatch(/3 valid, 0 quarantined/);
    // The dead worker's jobs were reclaimed (a second attempt), not waited out or lost.
    const store = openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock });
    onCleanup(() => store.close());
    expect(await store.countByStatus()).toMatchObject({ done: 3, running: 0, queued: 0 });
    const { items } = await store.listJobs({}, { limit: 10 });
    expect(items.some((job) => job.attempt >= 2)).toBe(true);
    expect(await leftovers(home)).toEqual([]);
  }, 300_000);

  it("claims only its own batch's jobs once a worker serves the home: the worker runs every job of the other batch, each once", async () => {
    const home = dockerHome();
    writeFileSync(join(home, 'proctor.toml'), '[workers]\nbaseline = 2\ngrade = 1\nsolve = 1\n');
    // No worker yet: the command runs its one long job itself, and keeps a slot free.
    // Its runner sleeps 12 s in each of its two runs: in flight until the other batch is in.
    const waiting = spawnTs(BIN, ['--home', home, 'baseline', slowSuite(1, 12, 'own'), '--wait']);
    const store = openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock });
    onCleanup(() => store.close());
    await waitFor(async () => (await store.countByStatus()).running === 1, {
      what: 'the waiting command to run its job',
      timeoutMs: 90_000,
      intervalMs: 200,
    });
    const worker = spawnTs(BIN, ['--home', home, 'worker']);
    onCleanup(async () => {
      worker.process.kill('SIGKILL');
      await worker.exited;
    });
    await waitFor(() => /this command runs only batch \S+'s jobs/.test(waiting.stderr()), {
      what: 'the waiting command to see the worker',
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    expect(waiting.stderr()).toMatch(
      /^proctor: a worker serves this home; this command runs only batch b_\S+'s jobs$/m,
    );
    // Another batch, while the waiting command's free slot polls the queue.
    const other = await proctor(['--home', home, 'baseline', slowSuite(4, 1, 'other')]);
    expect(other.code, other.stderr).toBe(0);
    const otherBatch = /batch (\S+):/.exec(other.stdout)?.[1] as string;
    // Still waiting, with a free slot, while the other batch's jobs are queued: else this test
    // would say nothing of which jobs it claims.
    expect(waiting.process.exitCode).toBeNull();
    await ended(waiting, 180_000, 'the waiting baseline to end');
    expect(waiting.process.exitCode, waiting.stderr()).toBe(0);
    expect(waiting.stdout()).toMatch(/own-0\s+valid/);
    await ranOnceBy(worker, store, otherBatch, 4, 180_000);
    worker.process.kill('SIGTERM');
    await worker.exited;
    expect(await leftovers(home)).toEqual([]);
  }, 420_000);

  it("on a shared PostgreSQL queue, claims only its own batch's jobs from its start while another host's worker runs jobs", async () => {
    const url = await emptyPgDatabase();
    const queue = `[queue]\nurl = ${JSON.stringify(url)}\n`;
    // Another host (a name of its own, its own home) whose worker runs one job at a time.
    const OTHER = 'proctor-wait-other';
    const otherHome = dockerHome(OTHER);
    writeFileSync(join(otherHome, 'proctor.toml'), `[workers]\nbaseline = 1\n${queue}`);
    const worker = spawnTs(BIN, ['--home', otherHome, 'worker'], { PROCTOR_HOST: OTHER });
    onCleanup(async () => {
      worker.process.kill('SIGKILL');
      await worker.exited;
    });
    await waitFor(() => worker.stderr().includes('ready'), {
      what: "the other host's worker to start",
      timeoutMs: 60_000,
    });
    const other = await proctor(['--home', otherHome, 'baseline', slowSuite(3, 5, 'other')], {
      PROCTOR_HOST: OTHER,
    });
    expect(other.code, other.stderr).toBe(0);
    const otherBatch = /batch (\S+):/.exec(other.stdout)?.[1] as string;
    const store = await tempPgStore({ url });
    await waitFor(async () => (await store.countByStatus()).running === 1, {
      what: "the other host's worker to run a job",
      timeoutMs: 90_000,
      intervalMs: 200,
    });

    // The other batch still has queued jobs this host's command could take.
    expect((await store.countByStatus()).queued).toBeGreaterThan(0);
    // This host has no worker: the command runs a pool, with two baseline slots.
    const home = dockerHome();
    writeFileSync(join(home, 'proctor.toml'), `[workers]\nbaseline = 2\n${queue}`);
    const waiting = spawnTs(BIN, ['--home', home, 'baseline', slowSuite(1, 1, 'own'), '--wait']);
    await ended(waiting, 180_000, 'the waiting baseline to end');
    expect(waiting.process.exitCode, waiting.stderr()).toBe(0);
    expect(waiting.stderr()).toMatch(
      /^proctor: a worker serves this home; this command runs only batch b_\S+'s jobs$/m,
    );
    expect(waiting.stdout()).toMatch(/own-0\s+valid/);

    await ranOnceBy(worker, store, otherBatch, 3, 240_000);
    worker.process.kill('SIGTERM');
    await worker.exited;
    expect(await leftovers(home)).toEqual([]);
    // leftovers() prunes only this host's workspace templates: the other host's go first.
    await pruneTemplates(testDocker(), { home: otherHome, host: OTHER, unlabelled: true });
    expect(await leftovers(otherHome)).toEqual([]);
  }, 480_000);

  it('does not wait for a stale presence file naming a live unrelated pid: grade --wait runs the job itself', async () => {
    const home = dockerHome();
    const pid = unrelatedProcess();
    // The file an older Proctor left, named by a pid that now belongs to `sleep`…
    mkdirSync(join(home, 'workers'), { recursive: true });
    writeFileSync(join(home, 'workers', `${hostname()}-${pid}`), `${hostname()}/${pid}/0badc0de\n`);
    // …and the lock file of a worker killed by SIGKILL whose owner id names that pid too.
    const dead = spawnTs(PRESENCE_CHILD, [home, `${hostname()}/${pid}/deadbeef`, 'worker']);
    await waitFor(() => dead.stdout().includes('held'), {
      what: 'the presence child',
      timeoutMs: 60_000,
    });
    dead.process.kill('SIGKILL');
    await dead.exited;

    const graded = spawnTs(BIN, [
      '--home',
      home,
      'grade',
      TASK,
      '--patch',
      join(TASK, 'solution/gold.patch'),
      '--wait',
    ]);
    await ended(graded, 90_000, 'grade --wait to end');
    expect(graded.stdout()).toMatch(/PASS/);
    expect(graded.process.exitCode).toBe(0);
    expect(await leftovers(home)).toEqual([]);
  }, 120_000);
});
