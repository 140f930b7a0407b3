// The `validate` job kind over the real assembly: createRuntime's pool with its registered
// handler, a real SQLite file, and the real Docker engine building the shell fixture's image
// and reading HEAD inside it. A sound bundle ends valid with its image identity; a bundle whose
// base_commit is not the image's HEAD ends invalid, with the reason, and the job is done (an
// invalid bundle is an answer, not a failure). Nothing of the jobs stays in Docker.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import type { Job } from '../../src/queue/index.js';
import { createRuntime, type ValidateResult } from '../../src/workers/index.js';
import { copyBundle } from '../helpers/bundles.js';
import { testDocker } from '../helpers/docker.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const docker = testDocker();

async function validatingPool() {
  const home = join(tempDir(), '.proctor');
  const runtime = createRuntime(loadConfig(home), systemClock, silentLogger);
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
  return { validate, leftovers };
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
});
