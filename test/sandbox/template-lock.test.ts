// Workspace templates between processes on one engine: two processes that need the same
// missing template prepare it once (the preparation container's name is the lock), a process
// SIGKILLed mid-preparation leaves a template the next process takes, and a crash that takes
// the preparation container with it leaves a half-made template that the reaper and prune
// remove (by label and age), with its stale lock.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { machineHost } from '../../src/config.js';
import { reapOrphans, removeOwned } from '../../src/sandbox/cleanup.js';
import { runToCompletion } from '../../src/sandbox/run.js';
import {
  createTemplateStore,
  listTemplates,
  preparationName,
  reapTemplates,
  templateKey,
} from '../../src/sandbox/template.js';
import { pruneTemplates } from '../../src/sandbox/template-prune.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import {
  dockerScope,
  execFileAsync,
  fixtureImage,
  readFromImage,
  testDocker,
  testOwner,
} from '../helpers/docker.js';
import { spawnTs, type Child } from '../helpers/processes.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const docker = testDocker();
const scope = dockerScope(docker, 'template-lock');

/** A home of the test's own, whose templates are pruned after the test. */
function home(): string {
  // A real folder: the reaper of a worker elsewhere removes the templates of gone homes.
  const h = tempDir('proctor-template-lock-');
  onCleanup(async () => {
    await pruneTemplates(docker, h, 0, { halfMadeAgeMs: 0 });
  });
  return h;
}

/**
 * The git-history fixture with a `git pack-objects` (the preparation packs the base commit's
 * objects with one) that takes `seconds` longer: a slow preparation.
 */
async function slowImage(seconds: number): Promise<string> {
  const image = await fixtureImage('git-history');
  const tag = `proctor-test-slow-pack-${randomBytes(4).toString('hex')}`;
  const dir = tempDir();
  writeFileSync(
    join(dir, 'git'),
    // The tag in it: an image of its own, whose templates no other test's run shares.
    `#!/bin/sh\n# ${tag}\ncase " $* " in *" pack-objects "*) sleep ${seconds};; esac\nexec /usr/bin/git "$@"\n`,
    { mode: 0o755 },
  );
  writeFileSync(join(dir, 'Dockerfile'), `FROM ${image}\nCOPY git /usr/local/bin/git\n`);
  await execFileAsync('docker', ['build', '-q', '-t', tag, dir]);
  onCleanup(async () => {
    await execFileAsync('docker', ['rmi', '-f', tag]).catch(() => undefined);
  });
  const { stdout } = await execFileAsync('docker', ['image', 'inspect', '-f', '{{.Id}}', tag]);
  return stdout.trim();
}

/** A template-child.ts process for a job of the scope; its job's resources go after the test. */
function child(h: string, image: string, base: string): Child {
  const job = `${scope.prefix}-${randomBytes(4).toString('hex')}`;
  onCleanup(async () => {
    await removeOwned(docker, { job, attempt: 1, home: h });
  });
  return spawnTs('test/helpers/template-child.ts', [h, job, image, base]);
}

async function started(children: Child[]): Promise<void> {
  await waitFor(() => children.every((c) => c.stdout().includes('waiting')), {
    timeoutMs: 30_000,
    what: 'the children to start',
  });
  for (const c of children) c.process.kill('SIGUSR1');
}

async function headOf(image: string, volume: string, h: string): Promise<string> {
  const result = await runToCompletion(
    docker,
    {
      owner: testOwner(docker, scope.prefix, h),
      role: 'probe',
      image,
      cmd: ['git', '-c', 'safe.directory=*', 'rev-parse', 'HEAD'],
      uid: 1000,
      gid: 1000,
      workdir: '/w',
      workspace: { volume, target: '/w' },
    },
    { timeoutMs: 60_000 },
  );
  expect(result.stderr).toBe('');
  return result.stdout.trim();
}

const keyOf = (h: string, image: string, base: string) =>
  templateKey({
    owner: { job: 'any', attempt: 1, home: h },
    image,
    repoPath: '/repo',
    baseCommit: base,
    uid: 1000,
    gid: 1000,
    history: 'full',
  });

/** The preparation container of `key`, once it runs. */
async function runningLock(key: string) {
  const lock = docker.getContainer(preparationName(key));
  await waitFor(
    async () => (await lock.inspect().catch(() => ({ State: { Running: false } }))).State.Running,
    { timeoutMs: 60_000, what: 'the preparation container to run' },
  );
  return lock;
}

describe('workspace templates between processes', () => {
  it('are prepared once by two processes that need the same missing template at once', async () => {
    const image = await slowImage(1);
    const base = await readFromImage(image, '/base_commit');
    const h = home();
    const children = [child(h, image, base), child(h, image, base)];
    await started(children);
    const ends = await Promise.all(children.map((c) => c.exited));
    expect(
      ends.map((e) => e.code),
      children.map((c) => c.stderr()).join('\n'),
    ).toEqual([0, 0]);
    const made = children.map(
      (c) =>
        JSON.parse(c.stdout().trim().split('\n').at(-1) ?? '') as {
          volume: string;
          preparedMs: number;
        },
    );
    expect(made.filter((m) => m.preparedMs > 0)).toHaveLength(1);
    expect(await listTemplates(docker, h)).toHaveLength(1);
    for (const m of made) expect(await headOf(image, m.volume, h)).toBe(base);
  });

  it('outlive a process SIGKILLed mid-preparation: the next process takes its template', async () => {
    const image = await slowImage(3);
    const base = await readFromImage(image, '/base_commit');
    const h = home();
    const first = child(h, image, base);
    await started([first]);
    await runningLock(keyOf(h, image, base));
    first.process.kill('SIGKILL');
    await first.exited;
    let preparedMs = 0;
    const volume = await createWorkspace(docker, {
      owner: testOwner(docker, scope.prefix, h),
      role: 'solver',
      image,
      repoPath: '/repo',
      baseCommit: base,
      uid: 1000,
      gid: 1000,
      templates: createTemplateStore(),
      onPrepared: (ms) => (preparedMs += ms),
    });
    expect(preparedMs).toBe(0);
    expect(await headOf(image, volume, h)).toBe(base);
    expect(await listTemplates(docker, h)).toHaveLength(1);
    // The dead process's preparation container goes with the reaper of dead jobs.
    const reaped = await reapOrphans(
      docker,
      { home: h, host: machineHost(), unlabelled: true },
      () => false,
    );
    expect(reaped.containers.length).toBeGreaterThanOrEqual(1);
    expect(await listTemplates(docker, h)).toHaveLength(1);
  });

  it('leave a half-made template when a crash takes the preparation with it: reaped by age, and by prune', async () => {
    const image = await slowImage(30);
    const base = await readFromImage(image, '/base_commit');
    const h = home();
    const key = keyOf(h, image, base);
    const crash = async () => {
      const c = child(h, image, base);
      await started([c]);
      const lock = await runningLock(key);
      c.process.kill('SIGKILL');
      await c.exited;
      await lock.kill();
      await lock.wait();
      const half = (await listTemplates(docker, h)).filter((t) => t.key === key);
      expect(half).toHaveLength(1);
      return half[0]?.name ?? '';
    };

    const half = await crash();
    // Younger than the age: a preparation between its volume and its container looks the same.
    expect(await reapTemplates(docker, h)).toEqual([]);
    expect(await reapTemplates(docker, h, { halfMadeAgeMs: 0 })).toEqual([half]);
    expect(await listTemplates(docker, h)).toEqual([]);
    await expect(docker.getContainer(preparationName(key)).inspect()).rejects.toMatchObject({
      statusCode: 404,
    });

    // A ready template of another image, then another crash: prune keeps the ready one only.
    await createWorkspace(docker, {
      owner: testOwner(docker, scope.prefix, h),
      role: 'solver',
      image: await fixtureImage('git-history'),
      repoPath: '/repo',
      baseCommit: base,
      uid: 1000,
      gid: 1000,
      templates: createTemplateStore(),
    });
    const second = await crash();
    const pruned = await pruneTemplates(docker, h, 1, { halfMadeAgeMs: 0 });
    expect(pruned).toMatchObject({ removed: [second], busy: [] });
    expect((await listTemplates(docker, h)).map((t) => t.key)).not.toContain(key);
    expect(await listTemplates(docker, h)).toHaveLength(1);
  });
});
