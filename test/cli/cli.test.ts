import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { spawnTs } from '../helpers/processes.js';
import { tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

function home() {
  const dir = tempDir();
  const store = tempStore({ path: join(dir, 'proctor.db') });
  return { dir, store };
}

function oneLine(text: string) {
  expect(text.trim().split('\n')).toHaveLength(1);
  expect(text).not.toMatch(/\n\s+at /);
}

describe('proctor status', () => {
  it('shows counts by status and each batch with its progress', async () => {
    const { dir, store } = home();
    const { batch } = await store.enqueueBatch({
      label: 'suite-a',
      jobs: Array.from({ length: 3 }, () => ({ kind: 'noop' as const, payload: {} })),
    });
    const [claimed] = await store.claim('noop', 'w', 1, 60_000);
    await store.complete({ id: claimed!.id, attempt: 1 }, null);
    const text = await proctor(['--home', dir, 'status']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      'jobs: 2 queued, 0 running, 1 done, 0 failed, 0 cancelled; 1 finished in the last minute',
    );
    expect(text.stdout).toMatch(new RegExp(`${batch!.id}\\s+suite-a\\s+1/3`));

    const json = await proctor(['status', '--json'], { PROCTOR_HOME: dir });
    const parsed = JSON.parse(json.stdout) as {
      counts: Record<string, number>;
      batches: Array<{ id: string; finished: number; total: number }>;
    };
    expect(parsed.counts).toEqual({ queued: 2, running: 0, done: 1, failed: 0, cancelled: 0 });
    expect(parsed).toMatchObject({ finishedLastMinute: 1 });
    expect(parsed.batches[0]).toMatchObject({ id: batch!.id, finished: 1, total: 3 });
  });

  it('shows named jobs and one batch', async () => {
    const { dir, store } = home();
    const { batch, jobIds } = await store.enqueueBatch({ jobs: [{ kind: 'noop', payload: {} }] });
    const jobs = await proctor(['--home', dir, 'status', String(jobIds[0]), '999', '--json']);
    expect(JSON.parse(jobs.stdout)).toMatchObject({
      jobs: [{ id: jobIds[0], status: 'queued', kind: 'noop' }],
      missing: [999],
    });
    expect(jobs.code).toBe(2);
    const one = await proctor(['--home', dir, 'status', '--batch', batch!.id]);
    expect(one.stdout).toContain(`batch ${batch!.id}: 0/1 finished`);
    const missing = await proctor(['--home', dir, 'status', '--batch', 'b_nope']);
    expect(missing.code).toBe(2);
    oneLine(missing.stderr);
  });

  it('counts a batch by outcome class, in the table and in --json', async () => {
    const { dir, store } = home();
    const grade = (candidate: string) => ({
      kind: 'grade' as const,
      payload: { bundle: '/b', candidate },
    });
    const { batch, jobIds } = await store.enqueueBatch({
      label: 'model-x',
      jobs: [grade('a'), grade('b'), grade('c'), grade('d')],
    });
    const claimed = await store.claim('grade', 'w', 3, 60_000);
    const [a, b, c] = claimed.map((j) => ({ id: j.id, attempt: j.attempt }));
    await store.complete(a!, { verdict: 'PASS', reason: 'PASS' }, [], { outcome: 'resolved' });
    await store.complete(b!, { verdict: 'FAIL', reason: 'HIDDEN_FAILED' }, [], {
      outcome: 'unresolved',
    });
    await store.fail(c!, 'docker went away', { retryable: false, outcome: 'error' });
    const table = await proctor(['--home', dir, 'status', '--batch', batch!.id]);
    expect(table.stdout).toContain(
      'classes: 1 resolved, 1 unresolved, 1 error, 0 invalid_task, 1 not classed yet',
    );
    expect(table.stdout).toMatch(
      new RegExp(`\\n${jobIds[1]}\\s+grade\\s+done\\s+unresolved\\s+1/3`),
    );
    const json = await proctor(['--home', dir, 'status', '--batch', batch!.id, '--json']);
    const parsed = JSON.parse(json.stdout) as {
      batch: { outcomes: Record<string, number> };
      jobs: Array<{ outcome: string | null }>;
    };
    expect(parsed.batch.outcomes).toEqual({
      resolved: 1,
      unresolved: 1,
      error: 1,
      invalid_task: 0,
      superseded: 0,
    });
    expect(parsed.jobs.map((j) => j.outcome)).toEqual(['resolved', 'unresolved', 'error', null]);
    const overview = JSON.parse((await proctor(['--home', dir, 'status', '--json'])).stdout) as {
      batches: Array<{ outcomes: Record<string, number> }>;
    };
    expect(overview.batches[0]?.outcomes).toMatchObject({ resolved: 1, error: 1 });
  });

  it('defaults --home to ./.proctor in the working directory', async () => {
    const cwd = tempDir();
    const result = await proctor(['status'], {}, cwd);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('jobs: 0 queued');
    const again = await proctor(['status', '--json'], {}, cwd);
    expect(JSON.parse(again.stdout)).toMatchObject({ counts: { queued: 0 } });
  });
});

describe('proctor cancel', () => {
  it('cancels a queued job and a running one held by a real worker process', async () => {
    const { dir, store } = home();
    const dbPath = join(dir, 'proctor.db');
    const execLog = join(dir, 'exec.log');
    writeFileSync(execLog, '');
    const { jobIds } = await store.enqueueBatch({
      jobs: [
        { kind: 'noop', payload: { sleepMs: 600_000 } },
        { kind: 'noop', payload: { sleepMs: 600_000 } },
      ],
    });
    const [running, queued] = jobIds as [number, number];
    const worker = spawnTs('test/helpers/worker-child.ts', [dbPath, '1'], { EXEC_LOG: execLog });
    await waitFor(async () => (await store.getJob(running))?.status === 'running', {
      timeoutMs: 20_000,
    });

    const result = await proctor(['--home', dir, 'cancel', String(queued), String(running)]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`job ${queued}: cancelled`);
    expect(result.stdout).toContain(`job ${running}: cancel requested`);
    const requested = Date.now();
    await waitFor(async () => (await store.getJob(running))?.status === 'cancelled', {
      timeoutMs: 5_000,
    });
    expect(Date.now() - requested).toBeLessThan(3_000);
    expect((await store.getJob(queued))?.startedAt).toBeNull();
    worker.process.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });

  it('cancels a batch, and needs job ids or --batch', async () => {
    const { dir, store } = home();
    const { batch } = await store.enqueueBatch({
      jobs: [
        { kind: 'noop', payload: {} },
        { kind: 'noop', payload: {} },
      ],
    });
    const result = await proctor(['--home', dir, 'cancel', '--batch', batch!.id]);
    expect(result.code).toBe(0);
    expect(result.stdout.match(/cancelled/g)).toHaveLength(2);
    const neither = await proctor(['--home', dir, 'cancel']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('cancel takes job ids or --batch ID');
  });
});

describe('bad input', () => {
  it.each([
    [['status', '--bogus'], "unknown option '--bogus'"],
    [['frobnicate'], "unknown command 'frobnicate'"],
    [['status', '--limit', '0'], 'expected an integer from 1 to 200'],
    [['cancel', 'abc'], 'job id: expected an integer from 1 to 9007199254740991 in decimal digits'],
    [['statsu'], "unknown command 'statsu' (Did you mean status?)"],
  ])('proctor %j exits 2 with one line of usage and a pointer to help', async (args, message) => {
    const result = await proctor(['--home', tempDir(), ...args]);
    expect(result.code).toBe(2);
    const [first, see, ...rest] = result.stderr.trimEnd().split('\n');
    expect(first).toContain(message);
    expect(see).toMatch(/^see: proctor (\w+ )?--help$/);
    expect(rest).toEqual([]);
  });

  it('prints help and exits 0 for --help', async () => {
    const result = await proctor(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: proctor');
  });

  it('reports a database that is not SQLite in one line, exit 2', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'proctor.db'), 'not a database at all '.repeat(200));
    const result = await proctor(['--home', dir, 'status']);
    expect(result.code).toBe(2);
    oneLine(result.stderr);
    expect(result.stderr).toBe(
      `proctor: cannot open database ${join(dir, 'proctor.db')}: file is not a database\n`,
    );
  });

  it('reports a home that cannot hold a database in one line, exit 2', async () => {
    const file = join(tempDir(), 'home-is-a-file');
    writeFileSync(file, '');
    const result = await proctor(['--home', file, 'status']);
    expect(result.code).toBe(2);
    oneLine(result.stderr);
    expect(result.stderr).toBe(`proctor: home ${file} is not a directory\n`);
  });

  it('names the key at fault in proctor.toml', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'proctor.toml'), '[workers]\ngrade = 0\n');
    let result = await proctor(['--home', dir, 'status']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('proctor.toml: key `workers.grade`');
    writeFileSync(join(dir, 'proctor.toml'), '[workers]\ngrades = 2\n');
    result = await proctor(['--home', dir, 'status']);
    expect(result.stderr).toContain('unknown key `workers.grades`');
    writeFileSync(join(dir, 'proctor.toml'), '[workers\n');
    result = await proctor(['--home', dir, 'status']);
    expect(result.code).toBe(2);
    oneLine(result.stderr);
    expect(result.stderr).toContain('proctor.toml: line 1');
  });
});
