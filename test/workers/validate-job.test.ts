// The `validate` job kind over the real assembly: createRuntime's pool with its registered
// handler, a real SQLite file, and the real Docker engine building the shell fixture's image
// and reading HEAD inside it. A sound bundle ends valid with its image identity; a bundle whose
// base_commit is not the image's HEAD ends invalid, with the reason, and the job is done (an
// invalid bundle is an answer, not a failure). Nothing of the jobs stays in Docker.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answers } from '../../src/api/schemas.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import type { Job } from '../../src/queue/index.js';
import { createRuntime, type ValidateResult } from '../../src/workers/index.js';
import { SHELL_TASK, copyBundle } from '../helpers/bundles.js';
import { testDocker } from '../helpers/docker.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const docker = testDocker();

async function validatingPool(toml = '') {
  const root = tempDir();
  const home = join(root, '.proctor');
  mkdirSync(home);
  writeFileSync(join(home, 'proctor.toml'), toml);
  const config = loadConfig(home);
  const runtime = createRuntime(config, systemClock, silentLogger);
  onCleanup(() => runtime.close());
  const pool = await runtime.createPool({ kinds: ['validate'], pollMs: 50 });
  onCleanup(() => pool.stop({ graceMs: 0 }));
  await pool.start();
  const finished = (id: number) =>
    waitFor(
      async () => {
        const job = await runtime.store.getJob(id);
        return job && ['done', 'failed', 'cancelled'].includes(job.status) ? job : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 100, what: `validate job ${id} to finish` },
    );
  const validate = async (bundle: string): Promise<Job> => {
    const { job } = await runtime.store.enqueue({ kind: 'validate', payload: { bundle } });
    pool.notify();
    return finished(job.id);
  };
  const leftovers = async () =>
    (await docker.listContainers({ all: true, filters: { label: [`proctor.home=${home}`] } }))
      .length;
  return { validate, leftovers, finished, runtime, pool, config, root };
}

describe('validate jobs', () => {
  it('end valid with the image identity when HEAD in the image is base_commit', async () => {
    const { validate, leftovers } = await validatingPool();
    const bundle = copyBundle();
    const job = await validate(bundle);
    expect(job.status).toBe('done');
    const result = job.result as ValidateResult;
    expect(result).toMatchObject({
      validity: 'valid',
      dir: bundle,
      task: { id: 'shell-div-zero' },
      image: { portable: false, kind: 'local_build' },
      problems: [],
    });
    expect(result.image?.localId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(result.detail).toBe(
      `local_build ${result.image?.portable ? '' : result.image?.imageId}`,
    );
    expect(await leftovers()).toBe(0);
  }, 320_000);

  it('end invalid, naming both commits, when base_commit is not HEAD in the image', async () => {
    const { validate, leftovers } = await validatingPool();
    const wrong = '1'.repeat(40);
    const bundle = copyBundle({
      editToml: (toml) => toml.replace(/^base_commit = .*$/m, `base_commit = "${wrong}"`),
    });
    const job = await validate(bundle);
    expect(job.status).toBe('done');
    expect(job.lastError).toBeNull();
    const result = job.result as ValidateResult;
    expect(result).toMatchObject({ validity: 'invalid', image: null, dir: bundle });
    expect(result.problems).toEqual([
      expect.stringMatching(
        new RegExp(
          `^task\\.toml: environment\\.base_commit: is ${wrong}, but HEAD of /repo in the image is [0-9a-f]{40}$`,
        ),
      ),
    ]);
    expect(result.detail).toBe(result.problems[0]);
    expect(await leftovers()).toBe(0);
  }, 320_000);

  it('end invalid with every static problem when the bundle no longer loads', async () => {
    const { validate } = await validatingPool();
    const bundle = copyBundle({ appendToml: 'surprise = 1' });
    const job = await validate(bundle);
    expect(job.status).toBe('done');
    expect(job.result).toMatchObject({ validity: 'invalid', task: null, image: null });
    expect((job.result as ValidateResult).problems.join('\n')).toMatch(/surprise/);
  }, 60_000);

  it('answer a client that validates a suite over HTTP and polls each job like any other', async () => {
    const { runtime, pool, config, root, leftovers } =
      await validatingPool('tasks_root = "tasks"\n');
    const tasks = join(root, 'tasks');
    cpSync(SHELL_TASK, join(tasks, 'a-sound'), { recursive: true });
    cpSync(
      copyBundle({
        editToml: (toml) =>
          toml
            .replace(/^base_commit = .*$/m, `base_commit = "${'1'.repeat(40)}"`)
            .replace('shell-div-zero', 'wrong-commit'),
      }),
      join(tasks, 'b-wrong-commit'),
      { recursive: true },
    );
    const server = await startServer({
      port: 0,
      store: runtime.store,
      artifacts: runtime.artifacts,
      config,
      secrets: [],
      onEnqueued: () => pool.notify(),
    });
    onCleanup(() => server.close());
    const base = `http://127.0.0.1:${server.port}`;
    const posted = await fetch(`${base}/api/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ path: '.' }),
    });
    expect(posted.status).toBe(202);
    const { results } = answers.validated.parse(await posted.json());
    const ids = results.map((r) => (r.ok ? r.job : -1));
    expect(ids.every((id) => id > 0)).toBe(true);
    const polled = await Promise.all(
      ids.map((id) =>
        waitFor(
          async () => {
            const answer = answers.job.parse(await (await fetch(`${base}/api/jobs/${id}`)).json());
            return answer.job.status === 'done' ? answer.job : undefined;
          },
          { timeoutMs: 300_000, intervalMs: 200, what: `job ${id} over HTTP` },
        ),
      ),
    );
    expect(polled.map((job) => (job.result as ValidateResult).validity)).toEqual([
      'valid',
      'invalid',
    ]);
    expect((polled[1]?.result as ValidateResult).problems[0]).toMatch(
      /environment\.base_commit: is 1{40}, but HEAD of \/repo in the image is [0-9a-f]{40}$/,
    );
    expect(await leftovers()).toBe(0);
  }, 320_000);
});
