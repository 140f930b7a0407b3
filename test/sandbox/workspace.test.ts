import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { runToCompletion } from '../../src/sandbox/run.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import {
  fixtureImage,
  fixtureWorkspace,
  readFromImage,
  testDocker,
  testOwner,
} from '../helpers/docker.js';
import { repoSpec } from '../helpers/templates.js';

const docker = testDocker();

/** Runs a shell script as the sandbox user against a workspace volume; returns stdout. */
async function inWorkspace(
  image: string,
  volume: string,
  owner: ReturnType<typeof testOwner>,
  script: string,
) {
  const result = await runToCompletion(
    docker,
    {
      owner,
      role: 'probe',
      image,
      cmd: ['sh', '-c', script],
      uid: 1000,
      gid: 1000,
      workdir: '/workspace',
      workspace: { volume, target: '/workspace' },
      env: { HOME: '/tmp', GIT_CONFIG_NOSYSTEM: '1' },
    },
    { timeoutMs: 60_000 },
  );
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  return result.stdout.trim();
}

describe('workspace init', () => {
  it('copies the clean tracked tree at the base commit, owned by the sandbox user, with no later history', async () => {
    const { image, base, owner, volume } = await fixtureWorkspace(docker, 'ws');
    const future = await readFromImage(image, '/future_commit');
    const stray = await readFromImage(image, '/stray_object');

    const report = await inWorkspace(
      image,
      volume,
      owner,
      [
        'git rev-parse HEAD',
        'git status --porcelain | wc -l',
        'cat a.txt sub/b.txt',
        'test -x run.sh && echo executable',
        'test -e untracked.txt && echo UNTRACKED || echo clean',
        'test -e future.txt && echo FUTURE || echo no-future',
        'git for-each-ref | wc -l',
        'git rev-list --all | wc -l',
        'git remote | wc -l',
        `git cat-file -e ${future} 2>/dev/null && echo FUTURE-OBJECT || echo no-future-object`,
        `git cat-file -e ${stray} 2>/dev/null && echo STRAY || echo no-stray`,
        'git reflog | wc -l',
        'stat -c %u:%g . a.txt .git',
        'touch new-file && echo writable',
      ].join('; '),
    );
    expect(report.split('\n')).toEqual([
      base,
      '0',
      'one',
      'two',
      'executable',
      'clean',
      'no-future',
      '0',
      '1',
      '0',
      'no-future-object',
      'no-stray',
      '0',
      '1000:1000',
      '1000:1000',
      '1000:1000',
      'writable',
    ]);
  });

  it("carries the files the tree's .gitignore ignores, and no other untracked file or change", async () => {
    const image = await fixtureImage('git-ignored');
    const base = await readFromImage(image, '/base_commit');
    const owner = testOwner(docker, 'ws');
    for (const history of ['full', 'none'] as const) {
      const volume = await createWorkspace(docker, {
        ...repoSpec(owner, image, base, history),
        role: 'evaluator',
      });
      const report = await inWorkspace(
        image,
        volume,
        owner,
        [
          'cat a.txt a.out build/lib/ext.so',
          'stat -c %u:%g a.out build/lib/ext.so',
          'test -e untracked.txt && echo UNTRACKED || echo no-untracked',
          'test -e local.txt && echo LOCAL || echo no-local',
          'git status --porcelain | wc -l',
          // A tracked file keeps the image's mtime (a build's outputs stay newer than it);
          // the changed one is the commit's again, rewritten.
          'stat -c %Y old.txt',
          'find . -path ./.git -prune -o -path ./build -prune -o -type f -newer a.out -print | sort | tr "\\n" " "',
        ].join('; '),
      );
      expect(report.split('\n'), history).toEqual([
        'one',
        'built',
        'compiled',
        '1000:1000',
        '1000:1000',
        'no-untracked',
        'no-local',
        '0',
        '978307200',
        './a.txt',
      ]);
    }
  });

  it('refuses a base commit that is not the image HEAD, and leaves no volume', async () => {
    const image = await fixtureImage('git-history');
    const future = await readFromImage(image, '/future_commit');
    const owner = testOwner(docker, 'ws');
    const error = await createWorkspace(docker, {
      owner,
      role: 'evaluator',
      image,
      repoPath: '/repo',
      baseCommit: future,
      uid: 1000,
      gid: 1000,
    }).catch((e: unknown) => e);
    expect(isProctorError(error, 'SANDBOX_INVALID')).toBe(true);
    expect((error as Error).message).toContain('not the base commit');
    const { Volumes } = await docker.listVolumes({
      filters: { label: [`proctor.job=${owner.job}`] },
    });
    expect(Volumes ?? []).toHaveLength(0);
  });

  it('refuses a path without a repository and a malformed commit', async () => {
    const image = await fixtureImage('git-history');
    const owner = testOwner(docker, 'ws');
    const base = await readFromImage(image, '/base_commit');
    const noRepo = await createWorkspace(docker, {
      owner,
      role: 'solver',
      image,
      repoPath: '/etc',
      baseCommit: base,
      uid: 1000,
      gid: 1000,
    }).catch((e: unknown) => e);
    expect((noRepo as Error).message).toContain('no git work tree at /etc');
    const bad = await createWorkspace(docker, {
      owner,
      role: 'solver',
      image,
      repoPath: '/repo',
      baseCommit: 'HEAD',
      uid: 1000,
      gid: 1000,
    }).catch((e: unknown) => e);
    expect((bad as Error).message).toContain('40 hex digits');
  });
});
