// Images pulled as part of the pipeline, end to end through the real `proctor` binary, a real
// registry on 127.0.0.1 and the real engine: a baseline whose bundle names a digest-pinned
// image pulls it when its job first needs it, and while the job waits on the pull, `status`
// (text and --json) and `--wait` show its bytes of total, rate and ETA, read from the job
// table; a registry that refuses the pull fails the job in one line, as the machine's error
// (never the task's nor a candidate's); and under a small [images] max_gb, the images of
// finished jobs are removed least recently used first while the batch runs, never one a queued
// or running job still needs, and `prune --images` removes the rest and says what it freed; the
// same for the images builds made for tasks, kept for the queued jobs of the bundles that used
// them.
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPulledImages, pulledImagesDir } from '../../src/sandbox/pulled-images.js';
import { SHELL_TASK } from '../helpers/bundles.js';
import { proctor } from '../helpers/cli.js';
import { testDocker } from '../helpers/docker.js';
import { leftovers } from '../helpers/home.js';
import {
  dockerCli,
  pushImage,
  startRefusingRegistry,
  startRegistry,
  startSlowRelay,
  type Registry,
} from '../helpers/registry.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const docker = testDocker();

/** The shell task's image (git and its repository at base_commit), built here once. */
let base: Promise<string> | undefined;
function shellImage(): Promise<string> {
  base ??= (async () => {
    const tag = `proctor-test-pull-shell:${randomBytes(4).toString('hex')}`;
    await dockerCli('build', '-q', '--network', 'host', '-t', tag, join(SHELL_TASK, 'environment'));
    onCleanup(async () => {
      base = undefined;
      await dockerCli('rmi', tag).catch(() => undefined);
    });
    return tag;
  })();
  return base;
}

/**
 * The shell task's image with a layer of `mb` random MB on top, in the registry only (the
 * engine holds its base, not it): `repository@digest` as pushed.
 */
async function registryImage(registry: Registry, mb: number): Promise<string> {
  const dir = tempDir('proctor-pulls-');
  writeFileSync(join(dir, 'blob'), randomBytes(mb * 1024 * 1024));
  writeFileSync(join(dir, 'Dockerfile'), `FROM ${await shellImage()}\nCOPY blob /blob\n`);
  const local = `proctor-test-pulls:${randomBytes(4).toString('hex')}`;
  await dockerCli('build', '-q', '-t', local, dir);
  const repository = `${registry.host}/shell-${randomBytes(3).toString('hex')}`;
  const digest = await pushImage(local, `${repository}:v1`);
  await dockerCli('rmi', local, `${repository}:v1`);
  onCleanup(async () => {
    await dockerCli('rmi', `${repository}@${digest}`).catch(() => undefined);
  });
  return `${repository}@${digest}`;
}

/** A copy of the shell task, named `id`, on `image` instead of its Dockerfile. */
function imageBundle(dir: string, id: string, image: string): string {
  const bundle = join(dir, id);
  cpSync(SHELL_TASK, bundle, { recursive: true });
  rmSync(join(bundle, 'environment'), { recursive: true });
  const toml = readFileSync(join(bundle, 'task.toml'), 'utf8')
    .replace(/^id = .*$/m, `id = "${id}"`)
    .replace(/^dockerfile = .*$/m, `image = "${image}"`);
  writeFileSync(join(bundle, 'task.toml'), toml);
  return bundle;
}

function home(toml: string): string {
  const dir = tempDir('proctor-pulls-home-');
  writeFileSync(join(dir, 'proctor.toml'), toml);
  return dir;
}

async function present(reference: string): Promise<boolean> {
  return (
    (await docker.listImages({ filters: { reference: [reference] } })).length > 0 ||
    (await docker
      .getImage(reference)
      .inspect()
      .then(
        () => true,
        () => false,
      ))
  );
}

describe('image pulls in the pipeline', { timeout: 900_000 }, () => {
  it('shows a pull in status and --wait while the job waits on it, and clears it after', async () => {
    const registry = await startRegistry();
    // 12 MB at 2 MB/s: six seconds or so of pulling to watch.
    const slow = await startSlowRelay(registry, 2 * 1024 * 1024);
    const pushed = await registryImage(registry, 12);
    const image = pushed.replace(registry.host, slow.host);
    const suite = tempDir('proctor-pulls-suite-');
    const bundle = imageBundle(suite, 'pulled-task', image);
    const dir = home('[workers]\nbaseline = 1\n[queue]\nmax_attempts = 1\n');

    const began = Date.now();
    const waiting = proctor(['--home', dir, 'baseline', bundle, '--wait']);
    const store = await waitFor(() => existsSync(join(dir, 'proctor.db')), {
      timeoutMs: 60_000,
      what: 'the home database',
    }).then(() => tempStore({ path: join(dir, 'proctor.db') }));
    // The worker writes the pull's figures to the job table while the job waits on it.
    const seen = await waitFor(
      async () => {
        const doc = (await store.jobProgress([1])).get(1);
        const pull = doc === undefined ? undefined : (JSON.parse(doc) as Record<string, unknown>);
        return pull !== undefined && typeof pull['totalBytes'] === 'number' && pull;
      },
      { timeoutMs: 120_000, intervalMs: 100, what: 'the pull progress of job 1' },
    ).catch(async (error: unknown) => {
      const ended = await waiting;
      throw new Error(`${String(error)}; baseline: ${ended.code} ${ended.stdout} ${ended.stderr}`);
    });
    expect(seen).toMatchObject({ kind: 'pull', image });
    // status, text and --json, in another process, reads the same figures.
    const text = await proctor(['--home', dir, 'status', '1']);
    const json = await proctor(['--home', dir, 'status', '--json']);
    const result = await waiting;
    const waited = Date.now() - began;
    expect(result.code, result.stderr).toBe(0);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `running .* pulling ${image.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: [\\d.]+ MB of [\\d.]+ MB, ([\\d.]+|\\?) MB/s, ETA (\\d+s|\\?) \\(layers \\d+/\\d+\\)`,
      ),
    );
    const pulls = (JSON.parse(json.stdout) as { pulls: Array<Record<string, unknown>> }).pulls;
    expect(pulls).toHaveLength(1);
    expect(pulls[0]).toMatchObject({ job: 1, kind: 'pull', image });
    expect(pulls[0]?.['totalBytes']).toBeGreaterThan(12_000_000);

    // --wait said when the pull began and ended, and no more than a line per 10 s between
    // (the pull's time is the machine's: counted from the whole wait's).
    const lines = result.stderr.split('\n');
    const pulling = lines.filter((l) => l.startsWith(`job 1 pulling ${image}: `));
    expect(pulling.length).toBeGreaterThanOrEqual(1);
    expect(pulling.length).toBeLessThanOrEqual(1 + Math.ceil(waited / 10_000));
    expect(lines).toContain(`job 1 pull of ${image} ended`);
    expect(result.stdout).toMatch(/pulled-task +valid/);

    // Done: no progress left to show, and the pull is recorded for the disk budget.
    expect((await store.jobProgress([1])).size).toBe(0);
    const after = await proctor(['--home', dir, 'status', '--json']);
    expect((JSON.parse(after.stdout) as { pulls: unknown[] }).pulls).toEqual([]);
    const recorded = await openPulledImages(pulledImagesDir(dir)).list();
    expect(recorded.map((r) => r.reference)).toEqual([image]);
    expect(await leftovers(dir)).toEqual([]);
  });

  it('fails a job whose registry refuses the pull in one line, as an error of the machine', async () => {
    const { host } = await startRefusingRegistry('login');
    const image = `${host}/private@sha256:${'e'.repeat(64)}`;
    const bundle = imageBundle(tempDir('proctor-pulls-suite-'), 'refused-task', image);
    const dir = home('[queue]\nmax_attempts = 1\n');
    const result = await proctor(['--home', dir, 'baseline', bundle, '--wait']);
    expect(result.code, result.stderr).not.toBe(0);
    const status = await proctor(['--home', dir, 'status', '1', '--json']);
    const [job] = (JSON.parse(status.stdout) as { jobs: Array<Record<string, unknown>> }).jobs;
    expect(job).toMatchObject({ status: 'failed', errorCode: 'DOCKER_ERROR' });
    const error = String(job?.['error']);
    expect(error).not.toContain('\n');
    expect(error).toMatch(
      new RegExp(
        `^cannot resolve the image: pulling ${image.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the registry refused: .*no basic auth credentials$`,
      ),
    );
    // Not the task's fault: it is not quarantined, and nothing is recorded as pulled.
    expect(result.stdout).toMatch(/refused-task +error /);
    expect(result.stdout).toContain('0 valid, 0 quarantined, 1 not judged');
    expect(await openPulledImages(pulledImagesDir(dir)).list()).toEqual([]);
    expect(await leftovers(dir)).toEqual([]);
  });

  it('keeps pulled images within max_gb while the batch runs, never removing one a job needs', async () => {
    const registry = await startRegistry();
    const [a, b, c] = [
      await registryImage(registry, 4),
      await registryImage(registry, 4),
      await registryImage(registry, 4),
    ] as [string, string, string];
    const size = (await docker.getImage(await shellImage()).inspect()).Size + 4 * 1024 * 1024;
    // Room for one of these images, not two.
    const budgetGb = (size * 1.5) / 1e9;
    const suite = tempDir('proctor-pulls-suite-');
    // Run in this order, one at a time: a's image is needed again by the last task, so it is
    // kept while b's and c's, whose jobs are done, are removed to make room.
    imageBundle(suite, 't1-a', a);
    imageBundle(suite, 't2-b', b);
    imageBundle(suite, 't3-c', c);
    imageBundle(suite, 't4-a', a);
    const dir = home(`[workers]\nbaseline = 1\n[images]\nmax_gb = ${budgetGb.toFixed(6)}\n`);
    const result = await proctor(['--home', dir, 'baseline', suite, '--wait']);
    expect(result.code, result.stderr).toBe(0);
    for (const id of ['t1-a', 't2-b', 't3-c', 't4-a']) {
      expect(result.stdout).toMatch(new RegExp(`${id} +valid`));
    }
    // One at a time, in the suite's order; a was pulled by the first job and never removed:
    // its record is the first pull's, made before the second job started.
    const status = await proctor(['--home', dir, 'status', '1', '2', '3', '4', '--json']);
    const jobs = (JSON.parse(status.stdout) as { jobs: Array<Record<string, unknown>> }).jobs;
    const task = (j: Record<string, unknown>) =>
      String((j['payload'] as { bundle: string }).bundle)
        .split('/')
        .pop();
    expect(jobs.map(task)).toEqual(['t1-a', 't2-b', 't3-c', 't4-a']);
    const [first, second] = [...(await openPulledImages(pulledImagesDir(dir)).list())];
    expect(second).toBeUndefined();
    expect(first?.reference).toBe(a);
    expect(first?.pulledAt).toBeLessThanOrEqual(Number(jobs[1]?.['startedAt']));
    expect(first?.usedAt).toBeGreaterThanOrEqual(Number(jobs[3]?.['startedAt']));
    expect(await present(a)).toBe(true);
    expect(await present(b)).toBe(false);
    expect(await present(c)).toBe(false);

    // Nothing queued or running needs a now: prune --images removes it and says so.
    const pruned = await proctor(['--home', dir, 'prune', '--images']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^removed 1 image\(s\), freed [\d.]+ MB\n/);
    expect(pruned.stdout).toContain(`${a}`);
    expect(pruned.stdout).toMatch(/removed: least recently used/);
    expect(await present(a)).toBe(false);
    expect(await openPulledImages(pulledImagesDir(dir)).list()).toEqual([]);
    // The base image the pulls were built on is not Proctor's: it is untouched.
    expect(await present(await shellImage())).toBe(true);
    expect(await leftovers(dir)).toEqual([]);
  });
});

/** A copy of the shell task, named `id`, whose Dockerfile builds an image of its own. */
function builtBundle(dir: string, id: string): string {
  const bundle = join(dir, id);
  cpSync(SHELL_TASK, bundle, { recursive: true });
  const dockerfile = join(bundle, 'environment/Dockerfile');
  writeFileSync(
    dockerfile,
    `${readFileSync(dockerfile, 'utf8')}RUN echo ${randomBytes(8).toString('hex')} > /built-for\n`,
  );
  const toml = join(bundle, 'task.toml');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace(/^id = .*$/m, `id = "${id}"`));
  return bundle;
}

describe('built images and the disk budget', { timeout: 900_000 }, () => {
  it('keeps the images builds made for tasks within max_gb, never one a queued job’s bundle used, and prune --images removes the rest', async () => {
    const suite = tempDir('proctor-builds-suite-');
    const a = builtBundle(suite, 't1-a');
    builtBundle(suite, 't2-b');
    // The shell task's image is about 150 MB; each build adds a line to it. Room for one.
    const base = (await docker.getImage(await shellImage()).inspect()).Size;
    const dir = home(
      `[workers]\nbaseline = 1\n[images]\nmax_gb = ${((base * 1.5) / 1e9).toFixed(6)}\n`,
    );
    // t1-a and t2-b queued, then t1-a again in a batch of its own: run one at a time in that
    // order, by the last command's pool.
    const first = await proctor(['--home', dir, 'baseline', suite]);
    expect(first.code, first.stderr).toBe(0);
    const result = await proctor(['--home', dir, 'baseline', a, '--wait']);
    expect(result.code, result.stderr).toBe(0);
    const status = await proctor(['--home', dir, 'status', '1', '2', '3', '--json']);
    const jobs = (
      JSON.parse(status.stdout) as {
        jobs: Array<{
          startedAt: number;
          payload: { bundle: string };
          result: { validity: string; image: { localId: string } };
        }>;
      }
    ).jobs;
    expect(jobs.map((j) => j.payload.bundle.split('/').pop())).toEqual(['t1-a', 't2-b', 't1-a']);
    expect(jobs.map((j) => j.result.validity)).toEqual(['valid', 'valid', 'valid']);
    const [imageA, imageB] = [jobs[0]?.result.image.localId, jobs[1]?.result.image.localId];
    onCleanup(async () => {
      for (const id of [imageA, imageB])
        await docker
          .getImage(id ?? '')
          .remove({ force: true })
          .catch(() => undefined);
    });
    expect(jobs[2]?.result.image.localId).toBe(imageA);
    // After the second job, over the budget: t1-a's image was kept for the queued job of its
    // bundle (recorded once, before the second job started: never removed and built again),
    // t2-b's removed.
    const records = await openPulledImages(pulledImagesDir(dir)).list();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ kind: 'built', localId: imageA, reference: imageA });
    expect(records[0]?.bundles).toEqual([realpathSync(a)]);
    expect(records[0]?.pulledAt).toBeLessThanOrEqual(Number(jobs[1]?.startedAt));
    expect(records[0]?.usedAt).toBeGreaterThanOrEqual(Number(jobs[2]?.startedAt));
    expect(await present(imageA ?? '')).toBe(true);
    expect(await present(imageB ?? '')).toBe(false);

    // Nothing queued needs it now: prune --images removes it, every task tag it had.
    const pruned = await proctor(['--home', dir, 'prune', '--images']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/^removed 1 image\(s\), freed [\d.]+ MB\n/);
    expect(pruned.stdout).toMatch(/built for t1-a .*removed: least recently used/);
    expect(await present(imageA ?? '')).toBe(false);
    expect(await openPulledImages(pulledImagesDir(dir)).list()).toEqual([]);
    // The image the shell task's own build made (not recorded here) is untouched.
    expect(await present(await shellImage())).toBe(true);
    expect(await leftovers(dir)).toEqual([]);
  });
});
