// `proctor retry` end to end: the real binary, a real SQLite file and real grades in Docker.
// Only what the machine broke is run again, in the same batch, once; bad input is one line.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir, tempStore } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GOLD = readFileSync(join(TASK, 'solution/gold.patch'), 'utf8');

interface BatchStatus {
  batch: { total: number; outcomes: Record<string, number> };
  jobs: Array<{
    id: number;
    status: string;
    outcome: string | null;
    payload: { retryOf?: number };
  }>;
}

async function batchStatus(home: string, batch: string): Promise<BatchStatus> {
  const result = await proctor(['--home', home, 'status', '--batch', batch, '--json']);
  return JSON.parse(result.stdout) as BatchStatus;
}

describe('proctor retry', () => {
  it('re-grades only the job the machine broke, in the same batch, once', async () => {
    const root = tempDir();
    for (const id of ['shell-a', 'shell-x']) {
      const dir = join(root, id);
      cpSync(TASK, dir, { recursive: true });
      const toml = join(dir, 'task.toml');
      writeFileSync(toml, readFileSync(toml, 'utf8').replace('shell-div-zero', id));
    }
    // shell-x's image cannot be built (the machine's fault: an error, not the candidate's).
    const dockerfile = join(root, 'shell-x/environment/Dockerfile');
    const good = readFileSync(dockerfile, 'utf8');
    writeFileSync(dockerfile, `${good}RUN echo the mirror is down && exit 1\n`);
    const preds = join(tempDir(), 'preds.jsonl');
    writeFileSync(
      preds,
      ['shell-a', 'shell-x']
        .map((id) =>
          JSON.stringify({ instance_id: id, model_name_or_path: 'm', model_patch: GOLD }),
        )
        .join('\n'),
    );
    const home = tempDir();
    const first = await proctor([
      '--home',
      home,
      'grade',
      root,
      '--predictions',
      preds,
      '--wait',
      '--json',
    ]);
    expect(first.code).toBe(1);
    const { batch, jobs } = JSON.parse(first.stdout) as {
      batch: string;
      jobs: Array<{ job: number; outcome: string; reason: string }>;
    };
    expect(jobs.map((j) => [j.outcome, j.reason])).toEqual([
      ['resolved', 'PASS'],
      ['error', 'IMAGE_INVALID'],
    ]);

    // The mirror is back; the retry grades the same candidate again, and only that one.
    writeFileSync(dockerfile, good);
    const retried = await proctor(['--home', home, 'retry', '--batch', batch, '--wait']);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toMatch(
      new RegExp(`\\n${jobs[1]?.job}\\s+\\d+\\s+grade\\s+shell-x\\s+resolved\\s+PASS`),
    );
    expect(retried.stdout).toContain(`batch ${batch}: 1 retried, 1 scored, 0 still not`);
    const after = await batchStatus(home, batch);
    expect(after.batch).toMatchObject({
      total: 3,
      outcomes: { resolved: 2, error: 0, superseded: 1 },
    });
    const retry = after.jobs.at(-1);
    expect(retry).toMatchObject({
      status: 'done',
      outcome: 'resolved',
      payload: { retryOf: jobs[1]?.job },
    });

    // Nothing errored since: a second retry adds nothing.
    const again = await proctor(['--home', home, 'retry', '--batch', batch]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`batch ${batch}: nothing to retry`);
    expect((await batchStatus(home, batch)).batch.total).toBe(3);
    expect(await leftovers(home)).toEqual([]);
  }, 300_000);

  it('retries cancelled jobs only with --cancelled, each once', async () => {
    const home = tempDir();
    const store = tempStore({ path: join(home, 'proctor.db') });
    const grade = (candidate: string) => ({
      kind: 'grade' as const,
      payload: { bundle: TASK, candidate },
    });
    const { batch, jobIds } = await store.enqueueBatch({ jobs: [grade('a'), grade('b')] });
    await store.cancelBatch(batch!.id);
    const plain = await proctor(['--home', home, 'retry', '--batch', batch!.id]);
    expect(plain.stdout.trim()).toBe(`batch ${batch!.id}: nothing to retry`);
    const withCancelled = await proctor([
      '--home',
      home,
      'retry',
      '--batch',
      batch!.id,
      '--cancelled',
      '--json',
    ]);
    expect(withCancelled.code).toBe(0);
    const out = JSON.parse(withCancelled.stdout) as {
      total: number;
      retried: Array<{ job: number; retry: number }>;
    };
    expect(out.total).toBe(4);
    expect(out.retried.map((r) => r.job)).toEqual(jobIds);
    for (const r of out.retried) {
      expect((await store.getJob(r.retry))?.payload).toMatchObject({
        candidate: expect.any(String),
        retryOf: r.job,
      });
    }
    const twice = await proctor(['--home', home, 'retry', '--batch', batch!.id, '--cancelled']);
    expect(twice.stdout.trim()).toBe(`batch ${batch!.id}: nothing to retry`);
    expect((await store.getBatch(batch!.id))?.total).toBe(4);
  });

  it('refuses an unknown batch, and no --batch, in one line, exit 2', async () => {
    const home = tempDir();
    const unknown = await proctor(['--home', home, 'retry', '--batch', 'b_nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trimEnd()).toBe('proctor: no batch b_nope');
    const missing = await proctor(['--home', home, 'retry']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^proctor: required option '--batch <id>' not specified\nsee: proctor retry --help\n$/,
    );
  });
});
